// The BindRequest outbox, for the dispatcher (workers): find what is to be sent, build the
// messages agents consume (src/protocol/bind-request.ts), and mark what was sent.
//   PENDING ──(sent on the cluster's BullMQ queue)──▶ DISPATCHED ──(agent's result)──▶ SUCCEEDED | FAILED
// A DISPATCHED request without a result after a while may be sent again (same id: agents are
// idempotent on it, BullMQ dedupes on it); every send counts one attempt.
import type { BindRequestMessage } from "../../protocol/bind-request.js";
import type { BindRequest } from "../types.js";
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
  return store.prisma.bindRequest.findMany({
    where: { ...(q.cluster ? { clusterName: q.cluster } : {}), OR: [pending, ...stale] },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    take: q.limit ?? 1000,
  });
}

interface MessageRow {
  id: string;
  kind: "BIND" | "EVICT";
  cluster: string;
  generation: bigint;
  jobId: string;
  jobName: string;
  namespace: string;
  queue: string;
  createdInCluster: boolean;
  task: string;
  podName: string;
  cpuMillis: number;
  memory: bigint;
  gpus: number;
  gpuFraction: number;
  gpuMemory: number;
  durationSeconds: number | null;
  exitFailure: boolean;
  node: string;
  gpuGroups: string[];
  gpuDevices: number[];
  reason: string;
  attempts: number;
}

/** The messages for these requests, in the given order; unknown ids and requests that already
 * have their result are skipped. One query: a page of a thousand requests costs one round trip
 * whatever their jobs and tasks. */
export async function bindRequestMessages(
  store: Store,
  ids: readonly string[],
): Promise<BindRequestMessage[]> {
  if (!ids.length) return [];
  const rows = await store.prisma.$queryRaw<MessageRow[]>`
    SELECT b.id::text AS id, b.kind::text AS kind, b.cluster_name AS cluster, b.generation,
      j.id::text AS "jobId", j.name AS "jobName", j.namespace, j.queue_name AS queue,
      j.created_in_cluster AS "createdInCluster", p.task_name AS task,
      p.name AS "podName", p.cpu_millis AS "cpuMillis", p.memory, p.gpus, p.gpu_fraction AS "gpuFraction",
      p.gpu_memory AS "gpuMemory", t.duration_seconds AS "durationSeconds",
      t.exit_failure AS "exitFailure", b.node_name AS node, b.gpu_groups AS "gpuGroups",
      b.gpu_devices AS "gpuDevices", b.reason, b.attempts
    FROM unnest(${[...ids]}::uuid[]) WITH ORDINALITY AS x(id, n)
    JOIN bind_request b ON b.id = x.id AND b.state IN ('PENDING', 'DISPATCHED')
    JOIN job j ON j.id = b.job_id
    JOIN pod p ON p.id = b.pod_id
    JOIN job_task t ON t.job_id = p.job_id AND t.name = p.task_name
    ORDER BY x.n`;
  return rows.map(
    (r): BindRequestMessage => ({
      id: r.id,
      kind: r.kind === "BIND" ? "bind" : "evict",
      cluster: r.cluster,
      generation: Number(r.generation),
      job: {
        id: r.jobId,
        name: r.jobName,
        namespace: r.namespace,
        queue: r.queue,
        createdInCluster: r.createdInCluster,
      },
      pod: {
        name: r.podName,
        task: r.task,
        resources: {
          cpuMillis: r.cpuMillis,
          memory: Number(r.memory),
          gpus: r.gpus,
          gpuFraction: r.gpuFraction,
          gpuMemory: r.gpuMemory,
        },
        durationSeconds: r.durationSeconds,
        exitFailure: r.exitFailure,
      },
      node: r.node,
      gpuGroups: r.gpuGroups,
      gpuDevices: r.gpuDevices,
      reason: r.reason,
      attempt: r.attempts + 1,
    }),
  );
}

/** After the messages were put on the queue: PENDING/DISPATCHED → DISPATCHED, one more attempt. */
export async function markBindRequestsDispatched(
  store: Store,
  ids: readonly string[],
  now = new Date(),
): Promise<number> {
  if (!ids.length) return 0;
  return store.prisma.$executeRaw`
    UPDATE bind_request SET state = 'DISPATCHED', dispatched_at = ${now}, attempts = attempts + 1
    WHERE id = ANY(${[...ids]}::uuid[]) AND state IN ('PENDING', 'DISPATCHED')`;
}

/** Of these requests, those still DISPATCHED without a result. */
export async function openBindRequests(store: Store, ids: readonly string[]): Promise<string[]> {
  if (!ids.length) return [];
  const rows = await store.prisma.$queryRaw<{ id: string }[]>`
    SELECT id::text AS id FROM bind_request WHERE id = ANY(${[...ids]}::uuid[]) AND state = 'DISPATCHED'`;
  return rows.map((r) => r.id);
}
