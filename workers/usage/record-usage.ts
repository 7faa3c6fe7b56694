// Usage history for time-based fair share: what each queue (leaves and their ancestors) holds on
// each cluster, as the proportion plugin counts it, recorded for the interval just past. One run
// per interval across all workers (a serial task on a timer), so each interval is counted once.
import { computeFairShare, type SchedulerConfig } from "../../src/core/index.js";
import {
  DEFAULT_USAGE_WINDOW,
  fairShareConfig,
  clusterSummaries,
  recordQueueUsage,
  type Store,
  type UsageWindow,
} from "../../src/store/index.js";
import { type ClusterViews, clusterView } from "../cluster-views.js";

export interface RecordUsageOptions {
  /** The usage history's window (older buckets are dropped). */
  window?: UsageWindow;
  now?: Date;
  /** The cycles' cached views, instead of a full read per cluster. */
  views?: ClusterViews;
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
    const { snapshot } = await clusterView(store, cluster.name, now.getTime(), opts.views);
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
