// The per-request loaders behind nested fields (Job.pods, Job.queue, Cluster.nodes…): one query
// per kind of lookup per request, however many parents ask.
import type {
  BindRequest,
  Cluster,
  Job,
  JobTask,
  Node,
  Pod,
  Queue,
  QueueQuota,
} from "../store/generated/prisma/client.js";
import { allocatedByNode, type ResourceSum } from "../store/queries/allocation.js";
import { QueueTree } from "../store/domain/queue-tree.js";
import {
  bindRequestsOfJobs,
  eventsOfJobs,
  podsOfJobs,
  type QueuePolicy,
  queuePolicies,
} from "../store/index.js";
import type { EventRow } from "../store/events.js";
import type { Store } from "../store/store.js";
import { groupBy } from "../store/collections.js";
import { BatchLoader } from "./loaders.js";

/** One loader per page size asked for in the request. */
function perPage<L>(make: (first: number) => L): (first: number) => L {
  const loaders = new Map<number, L>();
  return (first) => {
    let l = loaders.get(first);
    if (!l) {
      l = make(first);
      loaders.set(first, l);
    }
    return l;
  };
}

export function createLoaders(store: Store) {
  const db = store.prisma;
  let tree: Promise<QueueTree> | null = null;
  let policies: Promise<Map<string, QueuePolicy>> | null = null;
  const byKey = <T, K extends keyof T>(rows: T[], key: K) => new Map(rows.map((r) => [r[key], r]));
  return {
    /** The queue tree as of the first use in this request. */
    queueTree: () => {
      tree ??= db.queue.findMany({ select: { name: true, parentName: true } }).then((q) => new QueueTree(q));
      return tree;
    },
    /** Every queue's effective namespaces and pod-security level, as of the first use. */
    queuePolicies: () => {
      policies ??= queuePolicies(db);
      return policies;
    },
    queue: new BatchLoader<string, Queue | null>(
      async (names) => byKey(await db.queue.findMany({ where: { name: { in: names } } }), "name"),
      null,
    ),
    queueChildren: new BatchLoader<string, Queue[]>(
      async (names) =>
        groupBy(
          await db.queue.findMany({
            where: { parentName: { in: names } },
            orderBy: [{ createdAt: "asc" }, { name: "asc" }],
          }),
          (q) => q.parentName!,
        ),
      [],
    ),
    quotas: new BatchLoader<string, QueueQuota[]>(
      async (names) =>
        groupBy(
          await db.queueQuota.findMany({
            where: { queueName: { in: names } },
            orderBy: [{ scope: "asc" }, { resource: "asc" }],
          }),
          (q) => q.queueName,
        ),
      [],
    ),
    cluster: new BatchLoader<string, Cluster | null>(
      async (names) => byKey(await db.cluster.findMany({ where: { name: { in: names } } }), "name"),
      null,
    ),
    nodes: new BatchLoader<string, Node[]>(
      async (clusters) =>
        groupBy(
          await db.node.findMany({ where: { clusterName: { in: clusters } }, orderBy: { name: "asc" } }),
          (n) => n.clusterName,
        ),
      [],
    ),
    /** cluster → node → what its pods hold */
    allocation: new BatchLoader<string, Map<string, ResourceSum>>(
      async (clusters) => allocatedByNode(db, clusters),
      new Map(),
    ),
    job: new BatchLoader<string, Job | null>(
      async (ids) => byKey(await db.job.findMany({ where: { id: { in: ids } } }), "id"),
      null,
    ),
    /** A job's first `first` pods (name order). */
    pods: perPage((first) => new BatchLoader<string, Pod[]>((jobs) => podsOfJobs(db, jobs, first), [])),
    tasks: new BatchLoader<string, JobTask[]>(
      async (jobs) => groupBy(await db.jobTask.findMany({ where: { jobId: { in: jobs } } }), (t) => t.jobId),
      [],
    ),
    /** A job's first `first` events (oldest first). */
    events: perPage(
      (first) => new BatchLoader<string, EventRow[]>((jobs) => eventsOfJobs(db, jobs, first), []),
    ),
    /** A job's first `first` BindRequests (oldest first). */
    bindRequests: perPage(
      (first) =>
        new BatchLoader<string, (BindRequest & { pod: { name: string } })[]>(
          (jobs) => bindRequestsOfJobs(db, jobs, first),
          [],
        ),
    ),
  };
}

export type Loaders = ReturnType<typeof createLoaders>;
