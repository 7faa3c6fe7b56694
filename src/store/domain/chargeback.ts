// Chargeback: what the usage samples, the hourly rollups and the reports mean, as plain values.
// Samples are resource-seconds per 5-minute bucket (USAGE_BUCKET_SECONDS); rollups sum them per
// UTC hour and day; reports give resource-hours.
import { USAGE_BUCKET_SECONDS } from "./usage.js";

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;

/** Rollups are kept this long unless FLEETQ_USAGE_RETENTION_DAYS says otherwise. */
export const DEFAULT_USAGE_RETENTION_DAYS = 400;

export const floorTo = (t: number, unitMs: number): number => Math.floor(t / unitMs) * unitMs;

/** The part of [from, to) in each sample bucket it crosses: a sample lands where its seconds
 * were held, so an hour's rollup gets exactly that hour's seconds. */
export function bucketSpans(from: Date, to: Date): { bucket: Date; seconds: number }[] {
  const size = USAGE_BUCKET_SECONDS * 1000;
  const out: { bucket: Date; seconds: number }[] = [];
  for (let t = floorTo(from.getTime(), size); t < to.getTime(); t += size) {
    const seconds = (Math.min(to.getTime(), t + size) - Math.max(from.getTime(), t)) / 1000;
    if (seconds > 0) out.push({ bucket: new Date(t), seconds });
  }
  return out;
}

/** Where the next sample starts: where the last ended, but never further back than `maxSeconds`
 * (a cluster nobody sampled for a while gets no usage invented for the gap); the first sample
 * covers `seconds`. null = nothing to sample (another worker has sampled up to `at` already). */
export function sampleStart(
  sampledTo: Date | null,
  at: Date,
  seconds: number,
  maxSeconds: number,
): Date | null {
  const from = sampledTo
    ? Math.max(sampledTo.getTime(), at.getTime() - maxSeconds * 1000)
    : at.getTime() - seconds * 1000;
  return from < at.getTime() ? new Date(from) : null;
}

/** The hours a rollup may write: from where the previous stopped to the last hour wholly sampled. */
export function rollupRange(
  rolledTo: Date | null,
  sampledTo: Date | null,
  firstSample: Date | null,
): { from: Date; to: Date } | null {
  if (!sampledTo) return null;
  const to = floorTo(sampledTo.getTime(), HOUR_MS);
  const start = rolledTo?.getTime() ?? (firstSample ? floorTo(firstSample.getTime(), HOUR_MS) : to);
  return start < to ? { from: new Date(start), to: new Date(to) } : null;
}

/** The first day whose rollups are still kept. */
export const retentionCutoff = (now: Date, days: number): Date =>
  new Date(floorTo(now.getTime(), DAY_MS) - days * DAY_MS);

export interface ResourceHours {
  gpuHours: number;
  cpuCoreHours: number;
  memoryGiBHours: number;
}

/** Resource-seconds as stored (GPU-seconds, CPU-millicore-seconds, byte-seconds) → hours. */
export const hoursOf = (
  gpuSeconds: number,
  cpuMilliSeconds: number,
  memoryByteSeconds: number,
): ResourceHours => ({
  gpuHours: gpuSeconds / 3600,
  cpuCoreHours: cpuMilliSeconds / 1000 / 3600,
  memoryGiBHours: memoryByteSeconds / 2 ** 30 / 3600,
});
