// The BindRequest outbox, for the dispatcher (workers): find what is to be sent, build the
// messages agents consume (src/protocol/bind-request.ts), and mark what was sent.
//   PENDING ──(sent on the cluster's BullMQ queue)──▶ DISPATCHED ──(agent's result)──▶ SUCCEEDED | FAILED
// A DISPATCHED request without a result after a while may be sent again (same id: agents are
// idempotent on it, BullMQ dedupes on it); every send counts one attempt.
import type { BindRequestMessage } from "../../protocol/bind-request.js";
import type { BindRequest } from "../generated/prisma/client.js";
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

/** The messages for these requests, in the given order (unknown ids are skipped). */
export async function bindRequestMessages(
  store: Store,
  ids: readonly string[],
): Promise<BindRequestMessage[]> {
  const rows = await store.prisma.bindRequest.findMany({
    where: { id: { in: [...ids] } },
    include: {
      job: { select: { id: true, name: true, namespace: true, queueName: true, createdInCluster: true } },
      pod: { include: { task: { select: { durationSeconds: true, exitFailure: true } } } },
    },
  });
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.flatMap((id) => {
    const r = byId.get(id);
    if (!r) return [];
    const message: BindRequestMessage = {
      id: r.id,
      kind: r.kind === "BIND" ? "bind" : "evict",
      cluster: r.clusterName,
      generation: Number(r.generation),
      job: {
        id: r.job.id,
        name: r.job.name,
        namespace: r.job.namespace,
        queue: r.job.queueName,
        createdInCluster: r.job.createdInCluster,
      },
      pod: {
        name: r.pod.name,
        task: r.pod.taskName,
        resources: {
          cpuMillis: r.pod.cpuMillis,
          memory: Number(r.pod.memory),
          gpus: r.pod.gpus,
          gpuFraction: r.pod.gpuFraction,
          gpuMemory: r.pod.gpuMemory,
        },
        durationSeconds: r.pod.task.durationSeconds,
        exitFailure: r.pod.task.exitFailure,
      },
      node: r.nodeName,
      gpuGroups: r.gpuGroups,
      gpuDevices: r.gpuDevices,
      reason: r.reason,
      attempt: r.attempts + 1,
    };
    return [message];
  });
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
