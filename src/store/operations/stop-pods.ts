// Stopping jobs' pods, the one way a cancel and a run-time limit both do it: the pods on a node
// (BINDING, RUNNING) are evicted — RELEASING until their cluster confirms, an EVICT request each —
// and those not bound yet (PENDING, PIPELINED) end FAILED. Pods on a cluster changing bumps its
// generation: a session planned before the change may have placed these pods and must not commit.
import type { Tx } from "../db.js";
import { type CreatedBindRequest, createBindRequests } from "./bind-request-rows.js";
import { bumpGeneration } from "./cluster-fence.js";
import { writePodChanges } from "./pod-changes.js";

/** Why a job's pods stop: the message its pods keep, and the reason its EVICT requests carry. */
export interface StopReason {
  message: string;
  reason: string;
}

export interface StoppedPods {
  /** The job of each pod evicted. */
  evictedJobs: string[];
  /** The EVICT requests (PENDING in the outbox: the dispatcher sends them). */
  bindRequests: CreatedBindRequest[];
}

/** Stops every pod of `jobIds` (jobs on `cluster`, or on none); the caller holds the cluster's lock. */
export async function stopPodsOfJobs(
  tx: Tx,
  jobIds: readonly string[],
  cluster: string | null,
  now: Date,
  why: (jobId: string) => StopReason,
): Promise<StoppedPods> {
  const pods = await tx.pod.findMany({
    where: { jobId: { in: [...jobIds] } },
    select: { id: true, jobId: true, state: true, nodeName: true, gpuGroups: true, gpuDevices: true },
  });
  const evict = pods.filter((p) => p.nodeName && (p.state === "BINDING" || p.state === "RUNNING"));
  const drop = pods.filter((p) => p.state === "PENDING" || p.state === "PIPELINED");
  await writePodChanges(
    tx,
    [
      ...evict.map((p) => ({
        id: p.id,
        state: "RELEASING" as const,
        node: p.nodeName,
        message: why(p.jobId).message,
      })),
      ...drop.map((p) => ({ id: p.id, state: "FAILED" as const, node: null, message: why(p.jobId).message })),
    ],
    now,
  );
  const evictedJobs = evict.map((p) => p.jobId);
  if (!cluster || !(evict.length || drop.length)) return { evictedJobs, bindRequests: [] };
  const generation = await bumpGeneration(tx, cluster);
  const bindRequests = await createBindRequests(
    tx,
    evict.map((p) => ({
      kind: "EVICT",
      cluster,
      jobId: p.jobId,
      podId: p.id,
      node: p.nodeName!,
      gpuGroups: p.gpuGroups,
      gpuDevices: p.gpuDevices,
      reason: why(p.jobId).reason,
    })),
    generation,
  );
  return { evictedJobs, bindRequests };
}
