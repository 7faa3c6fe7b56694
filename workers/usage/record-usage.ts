// Usage history for time-based fair share: what each queue (leaves and their ancestors) holds on
// each cluster, as the proportion plugin counts it, recorded for the interval just past. One run
// per interval across all workers (a serial task on a timer), so each interval is counted once.
import { computeFairShare, type SchedulerConfig } from "../../src/core/index.js";
import {
  type ClusterCache,
  DEFAULT_USAGE_WINDOW,
  fairShareConfig,
  clusterSnapshot,
  clusterSummaries,
  recordQueueUsage,
  type Store,
  type UsageWindow,
} from "../../src/store/index.js";

export interface RecordUsageOptions {
  /** The usage history's window (older buckets are dropped). */
  window?: UsageWindow;
  now?: Date;
  /** The process's cached views of the clusters (the cycles'), refreshed as the cycles refresh
   * them (`usage`: their time-based fair share window), instead of a full read per cluster. */
  views?: { cache: ClusterCache; usage: UsageWindow | undefined };
}

export async function recordUsage(
  store: Store,
  config: SchedulerConfig,
  seconds: number,
  opts: RecordUsageOptions = {},
): Promise<number> {
  const now = opts.now ?? new Date();
  let recorded = 0;
  for (const cluster of await clusterSummaries(store)) {
    const { snapshot } = opts.views
      ? await opts.views.cache.refresh(cluster.name, { now: now.getTime(), usage: opts.views.usage })
      : await clusterSnapshot(store, cluster.name, { now: now.getTime() });
    const shares = computeFairShare(snapshot, fairShareConfig(config));
    await recordQueueUsage(
      store,
      {
        cluster: cluster.name,
        at: now,
        seconds,
        queues: shares.map((s) => ({ queue: s.queue, allocated: s.allocated })),
      },
      opts.window ?? DEFAULT_USAGE_WINDOW,
    );
    recorded++;
  }
  return recorded;
}
