// Creating BindRequest rows (the outbox): committed with the decision, dispatched afterwards.
// One INSERT … SELECT over a JSON array (a session commit creates hundreds at once: Prisma's
// createManyAndReturn spent ~0.4 s of CPU on 800 rows, this ~20 ms). Ids are UUIDv7 like
// Prisma's @default(uuid(7)), increasing in the order of `requests`; rows come back in that order.
import type { Tx } from "../db.js";
import type { BindRequest } from "../types.js";
import { uuidv7 } from "../ids.js";

export interface NewBindRequest {
  kind: "BIND" | "EVICT";
  cluster: string;
  jobId: string;
  podId: string;
  node: string;
  gpuGroups: string[];
  /** Device indices to pin a whole-GPU pod to (absent or [] = none chosen). */
  gpuDevices?: number[];
  reason: string;
}

export async function createBindRequests(
  tx: Tx,
  requests: readonly NewBindRequest[],
  generation: number,
): Promise<BindRequest[]> {
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
  const created = await tx.$queryRaw<BindRequest[]>`
    INSERT INTO bind_request (id, kind, cluster_name, job_id, pod_id, node_name, gpu_groups, gpu_devices, reason, generation)
    SELECT v.id, v.kind::"BindRequestKind", v.cluster, v.job_id, v.pod_id, v.node, v.gpu_groups, v.gpu_devices, v.reason, ${BigInt(generation)}
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
      AS v(id uuid, kind text, cluster text, job_id uuid, pod_id uuid, node text, gpu_groups text[], gpu_devices int[], reason text)
    RETURNING id::text AS id, kind::text AS kind, cluster_name AS "clusterName", job_id::text AS "jobId",
      pod_id::text AS "podId", node_name AS "nodeName", gpu_groups AS "gpuGroups", gpu_devices AS "gpuDevices", reason,
      state::text AS state, attempts, last_error AS "lastError", generation, created_at AS "createdAt",
      dispatched_at AS "dispatchedAt", completed_at AS "completedAt"`;
  const byId = new Map(created.map((b) => [b.id, b]));
  return rows.map((r) => byId.get(r.id)!);
}
