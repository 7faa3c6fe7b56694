// Time-based fair share: each queue's decayed recent usage on a cluster, as the proportion plugin
// wants it — a fraction of the cluster's capacity per resource (0.25 gpu = "held a quarter of the
// cluster's GPUs lately"). The buckets are read with the snapshot, so they match it.
import type { QuotaVector } from "../../core/index.js";
import { decayedAverage, type UsageBucket, type UsageWindow } from "../domain/usage.js";

/** Capacity of the nodes the proportion plugin counts (ready ones). */
export interface ClusterCapacity {
  gpu: number;
  cpuMillis: number;
  memory: number;
}

const fraction = (used: number, capacity: number) => (capacity > 0 ? used / capacity : 0);

/** The oldest bucket start (ms) a window at `now` reads. */
export const usageFrom = (now: number, window: UsageWindow): number => now - window.windowSeconds * 1000;

/** queue → decayed usage as a fraction of `capacity`. Queues without history are absent. */
export function queueUsageFractions(
  buckets: ReadonlyMap<string, readonly UsageBucket[]>,
  capacity: ClusterCapacity,
  now: Date,
  window: UsageWindow,
): Map<string, QuotaVector> {
  const out = new Map<string, QuotaVector>();
  for (const [queue, list] of buckets) {
    const avg = decayedAverage(list, now, window);
    out.set(queue, {
      gpu: fraction(avg.gpu, capacity.gpu),
      cpuMillis: fraction(avg.cpuMillis, capacity.cpuMillis),
      memory: fraction(avg.memory, capacity.memory),
    });
  }
  return out;
}
