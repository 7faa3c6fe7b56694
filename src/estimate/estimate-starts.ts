// When will a pending job start? The cluster is simulated forward from its live snapshot with the
// real scheduling core (the configured actions and plugins), one session per event: a job's run
// ends at its expected end and frees its pods' room, the next session places what fits, and the
// first session that binds a pending job's pods is its estimated start. Pure and deterministic:
// a function of the snapshot, the configuration and the run times; no clock, no I/O.
import {
  type PodGroupSpec,
  type SessionResult,
  type SchedulerConfig,
  type Snapshot,
  advanceSnapshot,
  createAction,
  isActiveAllocated,
  openSession,
  resultHoldsUntil,
  sessionResult,
} from "../core/index.js";

/** What is known of one job's run time (ms); null or absent = not declared. */
export interface JobRuntime {
  /** The run time its submitter expects (expectedRuntimeSeconds). */
  expectedMs?: number | null;
  /** The limit past which it is stopped (maxRuntimeSeconds). */
  maxMs?: number | null;
}

export interface EstimateOptions {
  /** Declared run times by job uid. */
  runtimes?: ReadonlyMap<string, JobRuntime>;
  /** The running estimate per queue (ms) from the history of its finished jobs. */
  queueRuntimeMs?: ReadonlyMap<string, number>;
  /** The recent run times (ms) of each queue's finished jobs: when given for a queue, they stand
   * for its running estimate (their median), and a job of it already running for a while is
   * expected to run the median of those runs that lasted longer. */
  queueRuntimeSamplesMs?: ReadonlyMap<string, readonly number[]>;
  /** How far ahead of the snapshot's `now` to look (ms). Default 24 h. */
  horizonMs?: number;
  /** At most this many sessions are run. Default 200. */
  maxSessions?: number;
  /** The time from a session that decided something to the next one (binds confirmed, evicted
   * pods gone). Default 1 s. */
  stepMs?: number;
  /** The jobs to estimate (uids). Default: every job with no pod on a node and some pod Pending. */
  jobs?: Iterable<string>;
  /** Jobs expected to arrive (a forecast, e.g. forecastArrivals): each joins the simulated
   * cluster when the clock reaches `at`; its run time as any other job's. */
  arrivals?: readonly { at: number; job: PodGroupSpec }[];
  /** Told each session's result and its time (what it evicts on the way to the starts). */
  observe?: (at: number, result: SessionResult) => void;
}

export interface EstimateResult {
  /** Estimated start (ms since the epoch) by job uid; null = not within the horizon or the
   * budget, or waiting on jobs whose run time is unknown. */
  starts: Map<string, number | null>;
  /** Sessions run and the simulated time reached (ms). */
  sessions: number;
  reachedAt: number;
}

export const DEFAULT_HORIZON_MS = 24 * 3_600_000;
export const DEFAULT_MAX_SESSIONS = 200;
export const DEFAULT_STEP_MS = 1_000;

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** The queue's running estimate (ms), or null. */
function queueRuntime(queue: string, o: EstimateOptions): number | null {
  const samples = o.queueRuntimeSamplesMs?.get(queue);
  if (samples?.length) return median(samples);
  return o.queueRuntimeMs?.get(queue) ?? null;
}

/** How long a job runs once started (ms): its declared expected run time, else its maximum run
 * time, else its queue's running estimate; null = unknown (it is taken to run past the horizon). */
export function runtimeOf(job: PodGroupSpec, o: EstimateOptions): number | null {
  const r = o.runtimes?.get(job.uid);
  return r?.expectedMs ?? r?.maxMs ?? queueRuntime(job.queue, o);
}

/**
 * When a job already running ends (ms): the first of its start + expected run time, start +
 * maximum run time that is still ahead; else from its queue's history: the median of the recent
 * runs that lasted longer than it has run so far (or start + the queue's estimate, if still
 * ahead). A job past all of them is taken to end at once (`now`). null = unknown (it holds its
 * room past the horizon).
 */
export function expectedEnd(job: PodGroupSpec, now: number, o: EstimateOptions): number | null {
  const start = job.lastStartAt ?? now;
  const r = o.runtimes?.get(job.uid);
  const declared = [r?.expectedMs, r?.maxMs].filter((v): v is number => v != null);
  for (const c of declared) if (start + c > now) return start + c;
  const samples = o.queueRuntimeSamplesMs?.get(job.queue);
  if (samples?.length) {
    const longer = samples.filter((x) => start + x > now);
    return longer.length ? start + median(longer) : now;
  }
  const q = o.queueRuntimeMs?.get(job.queue);
  if (q != null) return start + q > now ? start + q : now;
  return declared.length ? now : null;
}

/** The job has pods placed (and not leaving): it runs, or is about to. */
const onNode = (j: PodGroupSpec) => j.pods.some((p) => isActiveAllocated(p.status));

/** The estimate in one go. */
export function estimateStarts(
  snapshot: Snapshot,
  config: SchedulerConfig,
  o: EstimateOptions = {},
): EstimateResult {
  const steps = estimateSteps(snapshot, config, o);
  for (let s = steps.next(); ; s = steps.next()) if (s.done) return s.value;
}

/**
 * The estimate one session at a time: the generator yields after each session (the result so far)
 * and returns the final result. A caller that must not hold its thread for long (a worker sharing
 * its process with scheduling cycles) gives way between sessions, and may stop early: the starts
 * found so far hold, the rest are unknown.
 */
export function* estimateSteps(
  snapshot: Snapshot,
  config: SchedulerConfig,
  o: EstimateOptions = {},
): Generator<EstimateResult, EstimateResult> {
  const horizon = snapshot.now + (o.horizonMs ?? DEFAULT_HORIZON_MS);
  const maxSessions = o.maxSessions ?? DEFAULT_MAX_SESSIONS;
  const step = o.stepMs ?? DEFAULT_STEP_MS;
  const targets = new Set(
    o.jobs ??
      snapshot.jobs.filter((j) => !onNode(j) && j.pods.some((p) => p.status === "Pending")).map((j) => j.uid),
  );
  const starts = new Map<string, number | null>([...targets].map((uid) => [uid, null]));
  let open = targets.size;
  /** Expected end per job holding room; absent = runs past the horizon. */
  const ends = new Map<string, number>();
  const specs = new Map(snapshot.jobs.map((j) => [j.uid, j]));
  const arrivals = [...(o.arrivals ?? [])].filter((a) => a.at >= snapshot.now).sort((a, b) => a.at - b.at);
  for (const a of arrivals) specs.set(a.job.uid, a.job);
  let nextArrival = 0;
  for (const j of snapshot.jobs) {
    if (!onNode(j)) continue;
    const end = expectedEnd(j, snapshot.now, o);
    if (end !== null) ends.set(j.uid, end);
  }

  let snap = snapshot;
  let t = snapshot.now;
  let sessions = 0;
  let first = true;
  while (open > 0 && sessions < maxSessions && t <= horizon) {
    if (nextArrival < arrivals.length && arrivals[nextArrival]!.at <= t) {
      const come: PodGroupSpec[] = [];
      while (nextArrival < arrivals.length && arrivals[nextArrival]!.at <= t)
        come.push(arrivals[nextArrival++]!.job);
      snap = { ...snap, jobs: [...snap.jobs, ...come] };
    }
    snap = { ...snap, now: t };
    const ssn = openSession(snap, config);
    for (const a of config.actions) createAction(a).execute(ssn);
    const result = sessionResult(ssn);
    sessions++;
    o.observe?.(t, result);
    for (const e of result.evictions) ends.delete(e.job);
    for (const b of result.binds) {
      if (starts.has(b.job) && starts.get(b.job) === null) {
        starts.set(b.job, t);
        open--;
      }
      if (!ends.has(b.job)) {
        const spec = specs.get(b.job);
        const run = spec ? runtimeOf(spec, o) : null;
        if (run !== null) ends.set(b.job, t + run);
      }
    }
    const decided = result.binds.length + result.pipelines.length + result.evictions.length > 0;
    const holds = decided ? t : resultHoldsUntil(snap, result, config);
    snap = advanceSnapshot(snap, ssn, result, 0);
    ssn.close();

    let next = decided || first ? t + step : Number.POSITIVE_INFINITY;
    if (holds > t && holds < next) next = holds;
    for (const end of ends.values()) if (end > t && end < next) next = end;
    if (nextArrival < arrivals.length && arrivals[nextArrival]!.at < next)
      next = Math.max(arrivals[nextArrival]!.at, t + 1);
    if (!Number.isFinite(next)) break;
    t = next;
    // Jobs whose run ended by `t` leave the cluster; pods releasing in the live snapshot are gone
    // after the first step.
    const ended = new Set<string>();
    for (const [uid, end] of ends) if (end <= t) ended.add(uid);
    for (const uid of ended) ends.delete(uid);
    const releasing = first;
    first = false;
    if (ended.size || releasing)
      snap = {
        ...snap,
        jobs: snap.jobs
          .filter((j) => !ended.has(j.uid))
          .map((j) =>
            releasing && j.pods.some((p) => p.status === "Releasing")
              ? { ...j, pods: j.pods.filter((p) => p.status !== "Releasing") }
              : j,
          )
          .filter((j) => j.pods.length > 0),
      };
    yield { starts, sessions, reachedAt: t };
  }
  return { starts, sessions, reachedAt: t };
}
