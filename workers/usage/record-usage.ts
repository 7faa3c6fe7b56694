// Usage history for time-based fair share: what each queue (leaves and their ancestors) holds on
// each cluster, as the proportion plugin counts it, recorded for the interval just past; from the
// same computation, a sample of each queue's deserved share, fair share and allocation (the
// dashboard's charts); and the chargeback samples per job, rolled up per hour once an hour is
// wholly sampled. Each worker records the clusters it owns, once per interval.
import { computeFairShare, type SchedulerConfig } from "../../src/core/index.js";
import { fairShareConfig } from "../../src/fair-share/fair-share.js";
import {
  DEFAULT_USAGE_WINDOW,
  clusterSummaries,
  recordQueueShares,
  recordQueueUsage,
  recordUsageSamples,
  rollUpUsage,
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
  /** Only these clusters (the worker's own); absent: every cluster. */
  clusters?: readonly string[];
  /** How long hourly rollups are kept (days; default 400). */
  retentionDays?: number;
}

export async function recordUsage(
  store: Store,
  config: SchedulerConfig,
  seconds: number,
  opts: RecordUsageOptions = {},
): Promise<number> {
  const now = opts.now ?? new Date();
  let recorded = 0;
  const only = opts.clusters ? new Set(opts.clusters) : null;
  for (const cluster of await clusterSummaries(store)) {
    if (only && !only.has(cluster.name)) continue;
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
    await recordQueueShares(store, {
      cluster: cluster.name,
      at: now,
      queues: shares.map((s) => ({
        queue: s.queue,
        deserved: s.deserved,
        fairShare: s.fairShare,
        allocated: s.allocated,
      })),
    });
    await recordUsageSamples(store, { cluster: cluster.name, at: now, seconds });
    await rollUpUsage(store, cluster.name, {
      now,
      rawWindowSeconds: (opts.window ?? DEFAULT_USAGE_WINDOW).windowSeconds,
      retentionDays: opts.retentionDays,
    });
    recorded++;
  }
  return recorded;
}
