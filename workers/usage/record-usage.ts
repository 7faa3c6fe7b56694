// Usage history for time-based fair share: what each queue (leaves and their ancestors) holds on
// each cluster, as the proportion plugin counts it, recorded for the interval just past. One run
// per interval across all workers (a serial task on a timer), so each interval is counted once.
import { computeFairShare, type SchedulerConfig } from "../../src/core/index.js";
import {
  DEFAULT_USAGE_WINDOW,
  fairShareConfig,
  clusterSnapshot,
  clusterSummaries,
  recordQueueUsage,
  type Store,
  type UsageWindow,
} from "../../src/store/index.js";

export async function recordUsage(
  store: Store,
  config: SchedulerConfig,
  seconds: number,
  window: UsageWindow = DEFAULT_USAGE_WINDOW,
  now = new Date(),
): Promise<number> {
  let recorded = 0;
  for (const cluster of await clusterSummaries(store)) {
    const { snapshot } = await clusterSnapshot(store, cluster.name, { now: now.getTime() });
    const shares = computeFairShare(snapshot, fairShareConfig(config));
    await recordQueueUsage(
      store,
      {
        cluster: cluster.name,
        at: now,
        seconds,
        queues: shares.map((s) => ({ queue: s.queue, allocated: s.allocated })),
      },
      window,
    );
    recorded++;
  }
  return recorded;
}
