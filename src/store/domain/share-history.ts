// Fair-share history: a sample per queue and cluster each minute, kept for a day, then folded
// into hourly averages kept for a week, so a queue's chart over a week stays a few hundred points.
import type { QuotaVector } from "../../core/index.js";

export const SHARE_SAMPLE_SECONDS = 60;
export const SHARE_FOLD_SECONDS = 3600;
/** Minute samples older than this are folded into hours. */
export const SHARE_MINUTES_KEPT_SECONDS = 24 * 3600;
/** Nothing older than this is kept. */
export const SHARE_HISTORY_SECONDS = 7 * 24 * 3600;

/** The most samples one queue has on one cluster: a day of minutes, the week's other hours, and
 * the hour not yet folded. */
export const MAX_SHARE_SAMPLES =
  SHARE_MINUTES_KEPT_SECONDS / SHARE_SAMPLE_SECONDS +
  (SHARE_HISTORY_SECONDS - SHARE_MINUTES_KEPT_SECONDS) / SHARE_FOLD_SECONDS +
  SHARE_FOLD_SECONDS / SHARE_SAMPLE_SECONDS;

export interface ShareMeasures {
  deserved: QuotaVector;
  fairShare: QuotaVector;
  allocated: QuotaVector;
}

export interface ShareSample extends ShareMeasures {
  queue: string;
  at: Date;
  spanSeconds: number;
}

const floorTo = (at: Date, seconds: number) =>
  new Date(Math.floor(at.getTime() / (seconds * 1000)) * seconds * 1000);

/** The minute a sample taken at `at` stands for (a second sample in that minute replaces it). */
export const sampleMinute = (at: Date): Date => floorTo(at, SHARE_SAMPLE_SECONDS);

/** Minute samples before this are folded: a whole hour at a time, so no hour is folded twice. */
export const foldBefore = (now: Date): Date =>
  floorTo(new Date(now.getTime() - SHARE_MINUTES_KEPT_SECONDS * 1000), SHARE_FOLD_SECONDS);

/** Samples before this are dropped. */
export const historyHorizon = (now: Date): Date => new Date(now.getTime() - SHARE_HISTORY_SECONDS * 1000);

/** The average of the values; -1 (unlimited) anywhere makes it unlimited. */
function averageVector(vs: readonly QuotaVector[]): QuotaVector {
  const avg = (k: keyof QuotaVector) =>
    vs.some((v) => v[k] < 0) ? -1 : vs.reduce((n, v) => n + v[k], 0) / vs.length;
  return { gpu: avg("gpu"), cpuMillis: avg("cpuMillis"), memory: avg("memory") };
}

/** Minute samples as one sample per queue and hour: the average of each measure over the hour's
 * samples (minutes without a sample do not count). */
export function foldToHours(samples: readonly ShareSample[]): ShareSample[] {
  const groups = new Map<string, ShareSample[]>();
  for (const s of samples) {
    const key = `${s.queue}\u0000${floorTo(s.at, SHARE_FOLD_SECONDS).getTime()}`;
    const group = groups.get(key);
    if (group) group.push(s);
    else groups.set(key, [s]);
  }
  return [...groups.values()].map((group) => ({
    queue: group[0]!.queue,
    at: floorTo(group[0]!.at, SHARE_FOLD_SECONDS),
    spanSeconds: SHARE_FOLD_SECONDS,
    deserved: averageVector(group.map((s) => s.deserved)),
    fairShare: averageVector(group.map((s) => s.fairShare)),
    allocated: averageVector(group.map((s) => s.allocated)),
  }));
}
