// The reads of the API, the metrics and the CLI: named queries returning plain rows, so that no
// code outside the store holds the Prisma client. Lookups by key take many keys at once (the
// API's per-request loaders batch them) and return rows in a stable order.
import { prismaOf } from "../client.js";
import type { Store } from "../store.js";
import {
  allocatedByCluster,
  allocatedByNode,
  type ClusterCapacity,
  capacityByCluster,
  type ResourceSum,
} from "./allocation.js";
import { type JobListFilter, type JobPage, listJobs } from "./jobs.js";
import type {
  ApiToken,
  BindRequestState,
  BindRequestWithPod,
  Cluster,
  Job,
  JobTask,
  Node,
  Queue,
  QueueQuota,
} from "../types.js";

/** PostgreSQL answers (readiness). */
export async function databaseAnswers(store: Store): Promise<boolean> {
  return prismaOf(store).$queryRaw`SELECT 1::text AS ok`.then(
    () => true,
    () => false,
  );
}

/** Every queue's name and parent: the tree. */
export function queueTreeRows(store: Store): Promise<{ name: string; parentName: string | null }[]> {
  return prismaOf(store).queue.findMany({ select: { name: true, parentName: true } });
}

/** Every queue, oldest first. */
export function listQueues(store: Store): Promise<Queue[]> {
  return prismaOf(store).queue.findMany({ orderBy: [{ createdAt: "asc" }, { name: "asc" }] });
}

export function queuesNamed(store: Store, names: string[]): Promise<Queue[]> {
  return prismaOf(store).queue.findMany({ where: { name: { in: names } } });
}

/** The children of these queues, oldest first. */
export function queueChildren(store: Store, parents: string[]): Promise<Queue[]> {
  return prismaOf(store).queue.findMany({
    where: { parentName: { in: parents } },
    orderBy: [{ createdAt: "asc" }, { name: "asc" }],
  });
}

export function quotasOf(store: Store, queues: string[]): Promise<QueueQuota[]> {
  return prismaOf(store).queueQuota.findMany({
    where: { queueName: { in: queues } },
    orderBy: [{ scope: "asc" }, { resource: "asc" }],
  });
}

/** Every cluster, by name. */
export function listClusterRows(store: Store): Promise<Cluster[]> {
  return prismaOf(store).cluster.findMany({ orderBy: { name: "asc" } });
}

export function clustersNamed(store: Store, names: string[]): Promise<Cluster[]> {
  return prismaOf(store).cluster.findMany({ where: { name: { in: names } } });
}

export function nodesOf(store: Store, clusters: string[]): Promise<Node[]> {
  return prismaOf(store).node.findMany({
    where: { clusterName: { in: clusters } },
    orderBy: { name: "asc" },
  });
}

/** One page of a cluster's nodes, by name: the first `first` after the node named `after` (none
 * when there is no such node). A keyset read of the page's keys (its LIMIT in the SQL, so the
 * primary key's index stops there), then those rows: the page alone, however large the cluster. */
export async function nodesPage(
  store: Store,
  cluster: string,
  first: number,
  after: string | null,
): Promise<Node[]> {
  const names = await prismaOf(store).$queryRaw<{ name: string }[]>`
    SELECT n.name FROM node n
    WHERE n.cluster_name = ${cluster}
      AND (${after}::text IS NULL OR (n.name > ${after}::text
        AND EXISTS (SELECT 1 FROM node a WHERE a.cluster_name = ${cluster} AND a.name = ${after}::text)))
    ORDER BY n.name
    LIMIT ${first}`;
  if (!names.length) return [];
  return prismaOf(store).node.findMany({
    where: { clusterName: cluster, name: { in: names.map((n) => n.name) } },
    orderBy: { name: "asc" },
  });
}

export function jobsById(store: Store, ids: string[]): Promise<Job[]> {
  return prismaOf(store).job.findMany({ where: { id: { in: ids } } });
}

export async function jobById(store: Store, id: string): Promise<Job | null> {
  return prismaOf(store).job.findUnique({ where: { id } });
}

export function tasksOf(store: Store, jobs: string[]): Promise<JobTask[]> {
  return prismaOf(store).jobTask.findMany({ where: { jobId: { in: jobs } } });
}

/** A cluster's BindRequests (optionally in one state), oldest first, at most `first`. */
export function bindRequestsOfCluster(
  store: Store,
  cluster: string,
  state: BindRequestState | null,
  first: number,
): Promise<BindRequestWithPod[]> {
  return prismaOf(store).bindRequest.findMany({
    where: { clusterName: cluster, ...(state ? { state } : {}) },
    include: { pod: { select: { name: true } } },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    take: first,
  });
}

/** Every API token (hashes stay in the store), oldest first. */
export function listTokens(store: Store): Promise<Omit<ApiToken, "secretHash">[]> {
  return prismaOf(store).apiToken.findMany({
    orderBy: { createdAt: "asc" },
    omit: { secretHash: true },
  });
}

/** Pods waiting to be placed, per queue (jobs not finished). */
export function pendingPodsByQueue(store: Store): Promise<{ queue: string; n: number }[]> {
  return prismaOf(store).$queryRaw`
    SELECT j.queue_name AS queue, count(*)::int AS n
    FROM pod p JOIN job j ON j.id = p.job_id
    WHERE p.state IN ('PENDING', 'PIPELINED') AND j.state IN ('PENDING', 'ADMITTED', 'RUNNING')
    GROUP BY j.queue_name`;
}

/** How many clusters there are and how many nodes the largest has (the API's cost estimates). */
export async function fleetSize(store: Store): Promise<{ clusters: number; largestCluster: number }> {
  const [row] = await prismaOf(store).$queryRaw<{ clusters: number; largest: number }[]>`
    SELECT (SELECT count(*) FROM cluster)::int AS clusters,
      (SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM node GROUP BY cluster_name) c)::int AS largest`;
  return { clusters: row?.clusters ?? 0, largestCluster: row?.largest ?? 0 };
}

/** BindRequests not carried out yet, per cluster and state (PENDING, DISPATCHED). */
export function dispatchBacklog(store: Store): Promise<{ cluster: string; state: string; n: number }[]> {
  return prismaOf(store).$queryRaw`
    SELECT cluster_name AS cluster, state::text AS state, count(*)::int AS n
    FROM bind_request WHERE state IN ('PENDING', 'DISPATCHED')
    GROUP BY cluster_name, state`;
}

/** Per queue, its pending jobs waiting past the first start the estimator gave them: how many,
 * and how long past it the one waiting longest is (seconds). */
export function startsPastEstimate(
  store: Store,
): Promise<{ queue: string; jobs: number; seconds: number }[]> {
  return prismaOf(store).$queryRaw`
    SELECT j.queue_name AS queue, count(*)::int AS jobs,
      extract(epoch FROM now() - min(e.first_estimated_start))::float8 AS seconds
    FROM job_estimate e JOIN job j ON j.id = e.job_id
    WHERE j.state = 'PENDING' AND e.first_estimated_start < now()
    GROUP BY j.queue_name`;
}

/** One page of jobs, newest first: see jobs.ts. */
export function jobsPage(
  store: Store,
  filter: JobListFilter,
  first: number,
  after?: string | null,
): Promise<JobPage> {
  return listJobs(prismaOf(store), filter, first, after);
}

/** cluster → what its pods hold, in all (one row per cluster). */
export function allocationByCluster(
  store: Store,
  clusters: readonly string[],
): Promise<Map<string, ResourceSum>> {
  return allocatedByCluster(prismaOf(store), clusters);
}

/** cluster → node → what its pods hold. */
export function allocationByNode(
  store: Store,
  clusters: readonly string[],
): Promise<Map<string, Map<string, ResourceSum>>> {
  return allocatedByNode(prismaOf(store), clusters);
}

/** cluster → its nodes, counted, and what they offer in all (one row per cluster). */
export function capacityOfClusters(
  store: Store,
  clusters: readonly string[],
): Promise<Map<string, ClusterCapacity>> {
  return capacityByCluster(prismaOf(store), clusters);
}
