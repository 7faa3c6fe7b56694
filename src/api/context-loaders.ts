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
import {
  allocatedByCluster,
  allocatedByNode,
  type ResourceSum,
  zeroSum,
} from "../store/queries/allocation.js";
import { QueueTree } from "../store/domain/queue-tree.js";
import type { EventRow } from "../store/events.js";
import type { Store } from "../store/store.js";
import { groupBy } from "../store/collections.js";
import { BatchLoader } from "./loaders.js";

export function createLoaders(store: Store) {
  const db = store.prisma;
  let tree: Promise<QueueTree> | null = null;
  const byKey = <T, K extends keyof T>(rows: T[], key: K) => new Map(rows.map((r) => [r[key], r]));
  return {
    /** The queue tree as of the first use in this request. */
    queueTree: () => {
      tree ??= db.queue.findMany({ select: { name: true, parentName: true } }).then((q) => new QueueTree(q));
      return tree;
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
    /** cluster → what its pods hold, in all */
    clusterAllocation: new BatchLoader<string, ResourceSum>(
      async (clusters) => allocatedByCluster(db, clusters),
      zeroSum(),
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
    pods: new BatchLoader<string, Pod[]>(async (jobs) => {
      const rows = await db.pod.findMany({ where: { jobId: { in: jobs } } });
      rows.sort((a, b) => a.name.localeCompare(b.name, "en", { numeric: true }));
      return groupBy(rows, (p) => p.jobId);
    }, []),
    tasks: new BatchLoader<string, JobTask[]>(
      async (jobs) => groupBy(await db.jobTask.findMany({ where: { jobId: { in: jobs } } }), (t) => t.jobId),
      [],
    ),
    events: new BatchLoader<string, EventRow[]>(
      async (jobs) =>
        groupBy(
          await db.event.findMany({ where: { jobId: { in: jobs } }, orderBy: { id: "asc" } }),
          (e) => e.jobId!,
        ),
      [],
    ),
    bindRequests: new BatchLoader<string, (BindRequest & { pod: { name: string } })[]>(
      async (jobs) =>
        groupBy(
          await db.bindRequest.findMany({
            where: { jobId: { in: jobs } },
            include: { pod: { select: { name: true } } },
            orderBy: [{ createdAt: "asc" }, { id: "asc" }],
          }),
          (b) => b.jobId,
        ),
      [],
    ),
  };
}

export type Loaders = ReturnType<typeof createLoaders>;
