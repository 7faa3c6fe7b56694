// Creating BindRequest rows (the outbox): committed with the decision, dispatched afterwards.
// One INSERT … SELECT over a JSON array (a session commit creates thousands at once, and Prisma's
// createManyAndReturn spends many times the CPU on each row). Ids are UUIDv7 like Prisma's
// @default(uuid(7)), increasing in the order of `requests`; rows come back in that order.
import type { Tx } from "../db.js";
import type { BindRequest } from "../types.js";
import { uuidv7 } from "../ids.js";

export interface NewBindRequest {
  kind: "BIND" | "EVICT" | "DELETE";
  cluster: string;
  jobId: string;
  podId: string;
  node: string;
  gpuGroups: string[];
  /** Device indices to pin a whole-GPU pod to (absent or [] = none chosen). */
  gpuDevices?: number[];
  reason: string;
}

/** A row as created: its attempt (`restarts`) is the database's to fill in. */
export type CreatedBindRequest = Omit<BindRequest, "restarts">;

export async function createBindRequests(
  tx: Tx,
  requests: readonly NewBindRequest[],
  generation: number,
): Promise<CreatedBindRequest[]> {
  if (!requests.length) return [];
  const now = Date.now();
  // Same millisecond, random tails: sorted, so that id order is the order of `requests`.
  const ids = requests.map(() => uuidv7(now)).sort();
  const rows = requests.map((r, i) => ({
    id: ids[i]!,
    kind: r.kind,
    cluster: r.cluster,
    job_id: r.jobId,
    pod_id: r.podId,
    node: r.node,
    gpu_groups: r.gpuGroups,
    gpu_devices: r.gpuDevices ?? [],
    reason: r.reason,
  }));
  // Every row takes the transaction's time as created_at: one row comes back, not each request
  // (a cycle's commit creates thousands, and reading them back cost more than writing them).
  // A bind starts a run of the job's current attempt; an eviction ends the run its pod's latest
  // bind started (the agent names each attempt's pods apart).
  const [inserted] = await tx.$queryRaw<{ createdAt: Date }[]>`
    WITH ins AS (
      INSERT INTO bind_request (id, kind, cluster_name, job_id, pod_id, node_name, gpu_groups, gpu_devices, reason, generation, restarts)
      SELECT v.id, v.kind::"BindRequestKind", v.cluster, v.job_id, v.pod_id, v.node, v.gpu_groups, v.gpu_devices, v.reason, ${BigInt(generation)},
        CASE WHEN v.kind = 'BIND' THEN j.restarts
          ELSE COALESCE((SELECT b.restarts FROM bind_request b WHERE b.pod_id = v.pod_id AND b.kind = 'BIND'
                         ORDER BY b.created_at DESC, b.id DESC LIMIT 1), 0) END
      FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
        AS v(id uuid, kind text, cluster text, job_id uuid, pod_id uuid, node text, gpu_groups text[], gpu_devices int[], reason text)
      JOIN job j ON j.id = v.job_id
      RETURNING created_at)
    SELECT min(created_at) AS "createdAt" FROM ins`;
  return requests.map(
    (r, i): CreatedBindRequest => ({
      id: ids[i]!,
      kind: r.kind,
      clusterName: r.cluster,
      jobId: r.jobId,
      podId: r.podId,
      nodeName: r.node,
      gpuGroups: r.gpuGroups,
      gpuDevices: r.gpuDevices ?? [],
      reason: r.reason,
      state: "PENDING",
      attempts: 0,
      lastError: null,
      generation: BigInt(generation),
      createdAt: inserted!.createdAt,
      dispatchedAt: null,
      completedAt: null,
    }),
  );
}
