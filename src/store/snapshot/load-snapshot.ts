// The snapshot loader: one cluster's rows → the core's Snapshot, read in one REPEATABLE READ
// transaction (a consistent view) with a fixed handful of set queries, whatever the cluster's
// size. The workers' cluster caches (src/store/cache) read and build the same way.
import { prismaOf } from "../client.js";
import type { UsageWindow } from "../domain/usage.js";
import { NotFoundError } from "../errors.js";
import type { Store } from "../store.js";
import { ClusterState, type LoadedSnapshot } from "./cluster-state.js";
import { queueUsageFractions, usageFrom } from "./queue-usage.js";
import {
  type Query,
  readCluster,
  readConsistent,
  readJobs,
  readNodes,
  readQueues,
  readUsage,
} from "./read-rows.js";

export type { LoadedSnapshot } from "./cluster-state.js";

export interface LoadOptions {
  now?: number;
  /** Time-based fair share: fill each queue's `usage` with its decayed usage on this cluster
   * (a fraction of the cluster's capacity). Absent = no usage (plain fair share). */
  usage?: UsageWindow;
}

/** Reads every row of the cluster's snapshot into `state` (inside a consistent read). Returns
 * the usage buckets when asked for. */
export async function readAll(q: Query, state: ClusterState, now: number, usage?: UsageWindow) {
  const cluster = await readCluster(q, state.cluster);
  if (!cluster) throw new NotFoundError("cluster", state.cluster);
  const nodes = await readNodes(q, state.cluster);
  const queues = await readQueues(q, state.cluster);
  const jobs = await readJobs(q, state.cluster);
  const buckets = usage ? await readUsage(q, state.cluster, usageFrom(now, usage)) : null;
  return () => {
    state.setCluster(cluster);
    state.setNodes(nodes);
    state.setQueues(queues.queues, queues.quotas);
    state.setJobs(jobs);
    return buckets;
  };
}

export async function loadSnapshot(
  store: Store,
  cluster: string,
  opts: LoadOptions = {},
): Promise<LoadedSnapshot> {
  const now = opts.now ?? Date.now();
  const state = new ClusterState(cluster);
  const apply = await readConsistent(prismaOf(store), (q) => readAll(q, state, now, opts.usage));
  const buckets = apply();
  const usage =
    buckets && opts.usage
      ? queueUsageFractions(buckets, state.readyCapacity(), new Date(now), opts.usage)
      : null;
  return state.snapshot(now, usage);
}
