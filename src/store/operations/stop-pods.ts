// Stopping jobs' pods, the one way a cancel and a run-time limit both do it: the pods on a node
// (BINDING, RUNNING) are evicted — RELEASING until their cluster confirms, an EVICT request each —
// and those not bound yet (PENDING, PIPELINED) end FAILED. A workload's pods are its controller's,
// which would only make them again: its object is deleted instead (one DELETE request, once any
// pod of it was ever bound, so its object may exist), and its pods on nodes are RELEASING until
// they are gone from the cluster. Pods on a cluster changing bumps its
// generation: a session planned before the change may have placed these pods and must not commit.
import type { Tx } from "../db.js";
import { type CreatedBindRequest, createBindRequests, type NewBindRequest } from "./bind-request-rows.js";
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

/** The workload jobs among `jobIds` whose object may exist on their cluster (a pod of theirs was
 * bound), each with the pod its DELETE request is filed under. */
async function workloadsCreated(tx: Tx, jobIds: readonly string[]): Promise<Map<string, string>> {
  const rows = await tx.$queryRaw<{ jobId: string; podId: string }[]>`
    SELECT DISTINCT ON (b.job_id) b.job_id::text AS "jobId", b.pod_id::text AS "podId"
    FROM bind_request b JOIN job j ON j.id = b.job_id
    WHERE b.job_id = ANY(${[...jobIds]}::uuid[]) AND b.kind = 'BIND' AND j.workload IS NOT NULL
    ORDER BY b.job_id, b.created_at, b.id`;
  return new Map(rows.map((r) => [r.jobId, r.podId]));
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
  const created = cluster ? await workloadsCreated(tx, jobIds) : new Map<string, string>();
  if (!cluster || !(evict.length || drop.length || created.size)) return { evictedJobs, bindRequests: [] };
  const generation = await bumpGeneration(tx, cluster);
  const requests: NewBindRequest[] = [
    ...evict
      .filter((p) => !created.has(p.jobId))
      .map((p) => ({
        kind: "EVICT" as const,
        cluster,
        jobId: p.jobId,
        podId: p.id,
        node: p.nodeName!,
        gpuGroups: p.gpuGroups,
        gpuDevices: p.gpuDevices,
        reason: why(p.jobId).reason,
      })),
    ...[...created].map(([jobId, podId]) => ({
      kind: "DELETE" as const,
      cluster,
      jobId,
      podId,
      node: "",
      gpuGroups: [],
      reason: why(jobId).reason,
    })),
  ];
  const bindRequests = await createBindRequests(tx, requests, generation);
  return { evictedJobs, bindRequests };
}
