// The per-request loaders behind nested fields (Job.pods, Job.queue, Cluster.nodes…): one query
// per kind of lookup per request, however many parents ask.
import {
  allocationByCluster,
  capacityOfClusters,
  type ClusterCapacity,
  clusterOwners,
  allocationByNode,
  type BindRequest,
  bindRequestsOfJobs,
  type Cluster,
  clustersNamed,
  eventsOfJobs,
  groupBy,
  type Job,
  type JobEstimate,
  jobEstimatesOf,
  type JobUsage,
  jobUsageOf,
  jobsById,
  type JobTask,
  type Node,
  nodesOf,
  type Pod,
  podStatesOfJobs,
  podsOfJobs,
  type Queue,
  queueChildren,
  type QueuePolicy,
  queuePolicies,
  type QueueQuota,
  QueueTree,
  queueTreeRows,
  queuesNamed,
  quotasOf,
  type ResourceSum,
  type Store,
  type StoreEvent,
  zeroSum,
  tasksOf,
} from "../store/index.js";
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

const NO_HOURS = { gpuHours: 0, cpuCoreHours: 0, memoryGiBHours: 0 };
const NO_USAGE: JobUsage = { allocated: NO_HOURS, used: NO_HOURS };

export function createLoaders(store: Store) {
  let tree: Promise<QueueTree> | null = null;
  let policies: Promise<Map<string, QueuePolicy>> | null = null;
  const byKey = <T, K extends keyof T>(rows: T[], key: K) => new Map(rows.map((r) => [r[key], r]));
  const pageLoaders = new Map<string, BatchLoader<string, Pod[]>>();
  const podPages = (key: string, make: () => BatchLoader<string, Pod[]>) => {
    let l = pageLoaders.get(key);
    if (!l) {
      l = make();
      pageLoaders.set(key, l);
    }
    return l;
  };
  let owners: ReturnType<typeof clusterOwners> | null = null;
  return {
    /** Each cluster's owning worker, as of the first use in this request. */
    clusterOwners: () => {
      owners ??= clusterOwners(store);
      return owners;
    },
    /** The queue tree as of the first use in this request. */
    queueTree: () => {
      tree ??= queueTreeRows(store).then((q) => new QueueTree(q));
      return tree;
    },
    /** Every queue's effective namespaces and pod-security level, as of the first use. */
    queuePolicies: () => {
      policies ??= queuePolicies(store);
      return policies;
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
    /** cluster → its nodes, counted and summed */
    clusterCapacity: new BatchLoader<string, ClusterCapacity>(
      async (clusters) => capacityOfClusters(store, clusters),
      { nodes: 0, capacity: zeroSum() },
    ),
    /** cluster → what its pods hold, in all */
    clusterAllocation: new BatchLoader<string, ResourceSum>(
      async (clusters) => allocationByCluster(store, clusters),
      zeroSum(),
    ),
    /** cluster → node → what its pods hold */
    allocation: new BatchLoader<string, Map<string, ResourceSum>>(
      async (clusters) => allocationByNode(store, clusters),
      new Map(),
    ),
    job: new BatchLoader<string, Job | null>(async (ids) => byKey(await jobsById(store, ids), "id"), null),
    /** A pending job's stored start-time estimate. */
    estimate: new BatchLoader<string, JobEstimate | null>(
      async (ids) => byKey(await jobEstimatesOf(store, ids), "jobId"),
      null,
    ),
    /** A job's own resource-hours (zero before its pods first held anything). */
    jobUsage: new BatchLoader<string, JobUsage>((ids) => jobUsageOf(store, ids), NO_USAGE),
    /** A job's first `first` pods (name order) after the pod named `after`. */
    pods: (first: number, after: string | null) =>
      podPages(
        `${first}/${after ?? ""}`,
        () => new BatchLoader<string, Pod[]>((jobs) => podsOfJobs(store, jobs, first, after), []),
      ),
    /** How many pods of a job are in each state. */
    podStates: new BatchLoader<string, { state: string; count: number }[]>(
      (jobs) => podStatesOfJobs(store, jobs),
      [],
    ),
    tasks: new BatchLoader<string, JobTask[]>(
      async (jobs) => groupBy(await tasksOf(store, jobs), (t) => t.jobId),
      [],
    ),
    /** A job's first `first` events (oldest first). */
    events: perPage(
      (first) => new BatchLoader<string, StoreEvent[]>((jobs) => eventsOfJobs(store, jobs, first), []),
    ),
    /** A job's first `first` BindRequests (oldest first). */
    bindRequests: perPage(
      (first) =>
        new BatchLoader<string, (BindRequest & { pod: { name: string } })[]>(
          (jobs) => bindRequestsOfJobs(store, jobs, first),
          [],
        ),
    ),
  };
}

export type Loaders = ReturnType<typeof createLoaders>;
