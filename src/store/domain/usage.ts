// Recent usage: resource-seconds per queue and cluster in fixed buckets, read back as a decayed
// average allocation (a resource amount: "held 3.2 GPUs lately"), recent buckets weighing most.
import type { QuotaVector } from "../../core/index.js";

export const USAGE_BUCKET_SECONDS = 300;

export interface UsageWindow {
  /** Weight halves every this many seconds of age. */
  halfLifeSeconds: number;
  /** Buckets older than this are ignored (and pruned). */
  windowSeconds: number;
}

export const DEFAULT_USAGE_WINDOW: UsageWindow = { halfLifeSeconds: 3600, windowSeconds: 24 * 3600 };

export const bucketStart = (at: Date): Date =>
  new Date(Math.floor(at.getTime() / (USAGE_BUCKET_SECONDS * 1000)) * USAGE_BUCKET_SECONDS * 1000);

export interface UsageBucket {
  bucketStart: Date;
  gpuSeconds: number;
  cpuMilliSeconds: number;
  memoryByteSeconds: number;
}

const weight = (bucket: Date, now: number, w: UsageWindow) => {
  const ageSeconds = (now - bucket.getTime()) / 1000 - USAGE_BUCKET_SECONDS / 2;
  return 2 ** (-Math.max(0, ageSeconds) / w.halfLifeSeconds);
};

/** The decayed average allocation over the window (every bucket counts, used or not). */
export function decayedAverage(
  buckets: readonly UsageBucket[],
  now: Date,
  w: UsageWindow = DEFAULT_USAGE_WINDOW,
): QuotaVector {
  let total = 0;
  const first = bucketStart(new Date(now.getTime() - w.windowSeconds * 1000));
  for (let t = first.getTime(); t < now.getTime(); t += USAGE_BUCKET_SECONDS * 1000) {
    // The current bucket has only lasted since its start.
    const seconds = Math.min(USAGE_BUCKET_SECONDS, (now.getTime() - t) / 1000);
    total += seconds * weight(new Date(t), now.getTime(), w);
  }
  const sum = { gpu: 0, cpuMillis: 0, memory: 0 };
  for (const b of buckets) {
    if (b.bucketStart < first) continue;
    const k = weight(b.bucketStart, now.getTime(), w);
    sum.gpu += b.gpuSeconds * k;
    sum.cpuMillis += b.cpuMilliSeconds * k;
    sum.memory += b.memoryByteSeconds * k;
  }
  return total > 0
    ? { gpu: sum.gpu / total, cpuMillis: sum.cpuMillis / total, memory: sum.memory / total }
    : sum;
}
