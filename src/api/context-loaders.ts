// The per-request loaders behind nested fields (Job.pods, Job.queue, Cluster.nodes…): one query
// per kind of lookup per request, however many parents ask.
import {
  allocationByNode,
  bindRequestsOfJobs,
  type BindRequestWithPod,
  type Cluster,
  clustersNamed,
  type EventRow,
  groupBy,
  type Job,
  jobEvents,
  jobsById,
  type JobTask,
  type Node,
  nodesOf,
  type Pod,
  podsOf,
  type Queue,
  queueChildren,
  type QueueQuota,
  QueueTree,
  queueTreeRows,
  queuesNamed,
  quotasOf,
  type ResourceSum,
  type Store,
  tasksOf,
} from "../store/index.js";
import { BatchLoader } from "./loaders.js";

export function createLoaders(store: Store) {
  let tree: Promise<QueueTree> | null = null;
  const byKey = <T, K extends keyof T>(rows: T[], key: K) => new Map(rows.map((r) => [r[key], r]));
  return {
    /** The queue tree as of the first use in this request. */
    queueTree: () => {
      tree ??= queueTreeRows(store).then((q) => new QueueTree(q));
      return tree;
    },
    queue: new BatchLoader<string, Queue | null>(
      async (names) => byKey(await queuesNamed(store, names), "name"),
      null,
    ),
    queueChildren: new BatchLoader<string, Queue[]>(
      async (names) => groupBy(await queueChildren(store, names), (q) => q.parentName!),
      [],
    ),
    quotas: new BatchLoader<string, QueueQuota[]>(
      async (names) => groupBy(await quotasOf(store, names), (q) => q.queueName),
      [],
    ),
    cluster: new BatchLoader<string, Cluster | null>(
      async (names) => byKey(await clustersNamed(store, names), "name"),
      null,
    ),
    nodes: new BatchLoader<string, Node[]>(
      async (clusters) => groupBy(await nodesOf(store, clusters), (n) => n.clusterName),
      [],
    ),
    /** cluster → node → what its pods hold */
    allocation: new BatchLoader<string, Map<string, ResourceSum>>(
      async (clusters) => allocationByNode(store, clusters),
      new Map(),
    ),
    job: new BatchLoader<string, Job | null>(async (ids) => byKey(await jobsById(store, ids), "id"), null),
    pods: new BatchLoader<string, Pod[]>(
      async (jobs) => groupBy(await podsOf(store, jobs), (p) => p.jobId),
      [],
    ),
    tasks: new BatchLoader<string, JobTask[]>(
      async (jobs) => groupBy(await tasksOf(store, jobs), (t) => t.jobId),
      [],
    ),
    events: new BatchLoader<string, EventRow[]>(
      async (jobs) => groupBy(await jobEvents(store, jobs), (e) => e.jobId!),
      [],
    ),
    bindRequests: new BatchLoader<string, BindRequestWithPod[]>(
      async (jobs) => groupBy(await bindRequestsOfJobs(store, jobs), (b) => b.jobId),
      [],
    ),
  };
}

export type Loaders = ReturnType<typeof createLoaders>;
