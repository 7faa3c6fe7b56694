// The BindRequest outbox, for the dispatcher (workers): find what is to be sent, build the
// messages agents consume (src/protocol/bind-request.ts), and mark what was sent.
//   PENDING ──(sent on the cluster's BullMQ queue)──▶ DISPATCHED ──(agent's result)──▶ SUCCEEDED | FAILED
// A DISPATCHED request without a result after a while may be sent again (same id: agents are
// idempotent on it, BullMQ dedupes on it); every send counts one attempt.
import { prismaOf } from "../client.js";
import type { BindRequestMessage } from "../../protocol/bind-request.js";
import type { BindRequest } from "../types.js";
import { readStatement } from "../snapshot/read-rows.js";
import type { Store } from "../store.js";

export interface OutboxQuery {
  cluster?: string;
  /** Also return DISPATCHED requests sent longer ago than this without a result. */
  redispatchAfterMs?: number;
  /** Only PENDING requests created longer ago than this (a sweeper leaves the fresh ones to the
   * cycle that committed them). */
  pendingOlderThanMs?: number;
  limit?: number;
  now?: Date;
}

export async function bindRequestsToDispatch(store: Store, q: OutboxQuery = {}): Promise<BindRequest[]> {
  const now = q.now ?? new Date();
  const stale =
    q.redispatchAfterMs === undefined
      ? []
      : [{ state: "DISPATCHED" as const, dispatchedAt: { lt: new Date(+now - q.redispatchAfterMs) } }];
  const pending =
    q.pendingOlderThanMs === undefined
      ? { state: "PENDING" as const }
      : { state: "PENDING" as const, createdAt: { lt: new Date(+now - q.pendingOlderThanMs) } };
  return prismaOf(store).bindRequest.findMany({
    where: { ...(q.cluster ? { clusterName: q.cluster } : {}), OR: [pending, ...stale] },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    take: q.limit ?? 1000,
  });
}

// Every column named apart: on PGlite the rows come back as objects (readStatement).
const MESSAGES_SQL = `
  SELECT b.id::text AS id, b.kind::text AS kind, b.cluster_name AS cluster, b.generation::float8 AS generation,
    j.id::text AS job_id, j.name AS job_name, j.namespace, j.queue_name AS queue, j.created_in_cluster,
    p.task_name AS task, p.name AS pod_name, p.cpu_millis, p.memory::float8 AS memory, p.gpus,
    p.gpu_fraction, p.gpu_memory, t.duration_seconds, t.exit_failure OR b.restarts < t.exit_failure_attempts,
    b.node_name AS node, b.gpu_groups, b.gpu_devices, b.reason, b.attempts, b.restarts,
    j.workload->>'kind' AS workload
  FROM unnest($1::uuid[]) WITH ORDINALITY AS x(id, n)
  JOIN bind_request b ON b.id = x.id AND b.state IN ('PENDING', 'DISPATCHED')
  JOIN job j ON j.id = b.job_id
  JOIN pod p ON p.id = b.pod_id
  JOIN job_task t ON t.job_id = p.job_id AND t.name = p.task_name
  ORDER BY x.n`;

/** The messages for these requests, in the given order; unknown ids and requests that already
 * have their result are skipped. One query, rows as arrays: a page of a thousand requests costs
 * one round trip whatever their jobs and tasks. */
export async function bindRequestMessages(
  store: Store,
  ids: readonly string[],
): Promise<BindRequestMessage[]> {
  if (!ids.length) return [];
  const rows = await readStatement(prismaOf(store), MESSAGES_SQL, [[...ids]]);
  return rows.map((r): BindRequestMessage => {
    const [id, kind, cluster, generation, jobId, jobName, namespace, queue, createdInCluster] = r;
    const [task, podName, cpuMillis, memory, gpus, gpuFraction, gpuMemory] = r.slice(9, 16);
    const [durationSeconds, exitFailure, node, gpuGroups, gpuDevices, reason, attempts, restarts, workload] =
      r.slice(16);
    return {
      id: id as string,
      kind: kind === "BIND" ? "bind" : kind === "EVICT" ? "evict" : "delete",
      cluster: cluster as string,
      generation: Number(generation),
      job: {
        id: jobId as string,
        name: jobName as string,
        namespace: namespace as string,
        queue: queue as string,
        createdInCluster: createdInCluster as boolean,
        restarts: restarts as number,
        workload: (workload as string | null) ?? null,
      },
      pod: {
        name: podName as string,
        task: task as string,
        resources: {
          cpuMillis: cpuMillis as number,
          memory: Number(memory),
          gpus: gpus as number,
          gpuFraction: gpuFraction as number,
          gpuMemory: gpuMemory as number,
        },
        durationSeconds: durationSeconds as number | null,
        exitFailure: exitFailure as boolean,
      },
      node: node as string,
      gpuGroups: gpuGroups as string[],
      gpuDevices: gpuDevices as number[],
      reason: reason as string,
      attempt: (attempts as number) + 1,
    };
  });
}

/** After the messages were put on the queue: PENDING/DISPATCHED → DISPATCHED, one more attempt. */
export async function markBindRequestsDispatched(
  store: Store,
  ids: readonly string[],
  now = new Date(),
): Promise<number> {
  if (!ids.length) return 0;
  return prismaOf(store).$executeRaw`
    UPDATE bind_request SET state = 'DISPATCHED', dispatched_at = ${now}, attempts = attempts + 1
    WHERE id = ANY(${[...ids]}::uuid[]) AND state IN ('PENDING', 'DISPATCHED')`;
}

/** Of these requests, those still DISPATCHED without a result. */
export async function openBindRequests(store: Store, ids: readonly string[]): Promise<string[]> {
  if (!ids.length) return [];
  const rows = await prismaOf(store).$queryRaw<{ id: string }[]>`
    SELECT id::text AS id FROM bind_request WHERE id = ANY(${[...ids]}::uuid[]) AND state = 'DISPATCHED'`;
  return rows.map((r) => r.id);
}
