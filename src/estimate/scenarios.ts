// Start estimates that allow for jobs not yet submitted. The cluster is simulated forward without
// them (estimateStarts), and again in a few scenarios of future arrivals drawn from the recent
// ones: at the recent rate (a Poisson stream), each arrival a copy of a recently submitted job
// (its queue, shape and run time). A job's estimate is the median of its starts over the
// scenarios, the one without arrivals included: the start it is as likely to beat as to miss.
// Pure and deterministic: the draws are seeded by the snapshot's time.
import { type PodGroupSpec, type SchedulerConfig, type Snapshot, seededRandom } from "../core/index.js";
import {
  type EstimateOptions,
  type EstimateResult,
  estimateSteps,
  type JobRuntime,
} from "./estimate-starts.js";

/** A job submitted recently: a pattern for the jobs still to come. */
export interface RecentJob {
  job: PodGroupSpec;
  /** Its run time (ms), as the estimator takes it (declared, or its queue's estimate). */
  runtimeMs: number;
}

export interface ScenarioOptions extends EstimateOptions {
  /** The jobs submitted in the last `recentWindowMs` before the snapshot's time. */
  recent?: readonly RecentJob[];
  recentWindowMs?: number;
  /** Scenarios with arrivals (besides the one without). Default 4; 0 = none. */
  scenarios?: number;
}

export const DEFAULT_SCENARIOS = 4;

/** The median of the starts, null standing for "later than any"; null if that is the median. */
function medianStart(xs: (number | null)[]): number | null {
  const s = [...xs].sort((a, b) => (a ?? Number.POSITIVE_INFINITY) - (b ?? Number.POSITIVE_INFINITY));
  return s[(s.length - 1) >> 1] ?? null;
}

/** One scenario of arrivals from `now` up to `until`. */
export function drawArrivals(
  recent: readonly RecentJob[],
  windowMs: number,
  now: number,
  until: number,
  next: () => number,
  tag: string,
): { at: number; job: PodGroupSpec; runtimeMs: number }[] {
  const out: { at: number; job: PodGroupSpec; runtimeMs: number }[] = [];
  if (!recent.length || windowMs <= 0) return out;
  const gap = windowMs / recent.length;
  for (let at = now + Math.round(-Math.log(1 - next()) * gap), i = 0; at < until; i++) {
    const r = recent[Math.min(recent.length - 1, Math.floor(next() * recent.length))]!;
    const uid = `${tag}-${i}`;
    out.push({
      at,
      runtimeMs: r.runtimeMs,
      job: {
        ...r.job,
        uid,
        name: uid,
        createdAt: at,
        lastStartAt: null,
        staleSince: null,
        pods: r.job.pods.map((p, k) => ({
          ...p,
          uid: `${uid}-${k}`,
          name: `${uid}-${k}`,
          status: "Pending" as const,
          node: null,
          gpuGroups: [],
          createdAt: at,
        })),
      },
    });
    at += Math.max(1, Math.round(-Math.log(1 - next()) * gap));
  }
  return out;
}

/** Estimated starts allowing for the jobs still to come (see the file's head), in one go. */
export function estimateStartsWithArrivals(
  snapshot: Snapshot,
  config: SchedulerConfig,
  o: ScenarioOptions = {},
): EstimateResult {
  const steps = estimateStepsWithArrivals(snapshot, config, o);
  for (let s = steps.next(); ; s = steps.next()) if (s.done) return s.value;
}

/**
 * The same, one session at a time (as estimateSteps): the simulation without arrivals first, then
 * each scenario. Until the scenarios are done the result so far is that of the simulation without
 * arrivals, so a caller that stops early keeps those estimates.
 */
export function* estimateStepsWithArrivals(
  snapshot: Snapshot,
  config: SchedulerConfig,
  o: ScenarioOptions = {},
): Generator<EstimateResult, EstimateResult> {
  const baseSteps = estimateSteps(snapshot, config, o);
  let base: EstimateResult;
  for (;;) {
    const s = baseSteps.next();
    if (s.done) {
      base = s.value;
      break;
    }
    yield s.value;
  }
  const k = o.scenarios ?? DEFAULT_SCENARIOS;
  const recent = o.recent ?? [];
  const known = [...base.starts.values()].filter((s): s is number => s !== null);
  if (k <= 0 || !recent.length || !known.length) return base;
  // Jobs arriving after the last estimated start cannot delay it.
  const until = Math.max(...known);
  const next = seededRandom(snapshot.now);
  const all = new Map<string, (number | null)[]>([...base.starts].map(([uid, s]) => [uid, [s]]));
  let sessions = base.sessions;
  for (let i = 0; i < k; i++) {
    const come = drawArrivals(recent, o.recentWindowMs ?? 0, snapshot.now, until, next, `scenario${i}`);
    const runtimes = new Map<string, JobRuntime>(o.runtimes ?? []);
    for (const a of come) runtimes.set(a.job.uid, { expectedMs: a.runtimeMs });
    const steps = estimateSteps(snapshot, config, {
      ...o,
      runtimes,
      jobs: base.starts.keys(),
      arrivals: [...(o.arrivals ?? []), ...come.map(({ at, job }) => ({ at, job }))],
    });
    for (;;) {
      const s = steps.next();
      if (s.done) {
        sessions += s.value.sessions;
        for (const [uid, start] of s.value.starts) all.get(uid)?.push(start);
        break;
      }
      yield { ...base, sessions: sessions + s.value.sessions };
    }
  }
  const starts = new Map([...all].map(([uid, xs]) => [uid, medianStart(xs)]));
  return { starts, sessions, reachedAt: base.reachedAt };
}
