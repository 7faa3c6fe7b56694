// One fault under load: a steady load starts, runs a while (the backlog it makes is the
// normal one), the fault is injected, the load goes on; then the load stops, everything settles,
// and the checks run. The result is one row of the fault run's table.
import { accountJobs, backlog, type Checker, describeJobs, firstBindAfter } from "./checks.js";
import type { Fault } from "./faults.js";
import { LoadGenerator } from "./load.js";
import type { Topology } from "./topology.js";

export interface ScenarioOptions {
  /** Submissions per second. */
  rate: number;
  /** Load before the fault. */
  warmupSeconds: number;
  /** Load after the fault is over. */
  afterSeconds: number;
  /** How long after the fault the first bind and the backlog's recovery are watched for (at
   * least afterSeconds; default 60 s). */
  watchSeconds?: number;
  /** How long the backlog may go without shrinking once the load stopped: settling goes on as
   * long as jobs keep starting or finishing, and gives up after this long without any. */
  settleSeconds?: number;
  /** Settling stops after this long in any case. */
  settleLimitSeconds?: number;
  seed?: number;
  /** Progress lines (the backlog as it goes). */
  log?: (line: string) => void;
}

export interface FaultResult {
  fault: string;
  submissions: number;
  /** Accepted submissions missing or stored twice. */
  jobsLost: number;
  /** Accepted jobs still neither running nor finished when settling gave up (the backlog stopped
   * shrinking): not lost, but never placed. */
  jobsStuck: number;
  podsBoundTwice: number;
  overcommittedNodes: number;
  /** Of overcommittedNodes: in the clusters, and in the control plane's books. */
  overcommittedInClusters: number;
  overcommittedInBooks: number;
  partialGangs: number;
  limitBreaches: number;
  ghostPods: number;
  /** Pods a cluster ran that the books did not hold on that cluster and node (sampled all along,
   * and once more after settling). */
  strayPods: number;
  /** Fault → backlog back to its level before the fault. */
  recoverySeconds: number | null;
  /** Fault → the first pod a cluster started. */
  firstBindSeconds: number | null;
  /** Of jobsLost: accepted but never stored, and stored twice. */
  jobsMissing: number;
  jobsDuplicated: number;
  /** Seconds settling took after the load stopped. */
  settleSeconds: number;
  /** Submissions no replica took within the client's patience (not accepted, so not lost). */
  submissionsRefused: number;
  /** Requests the clients had to send again. */
  clientRetries: number;
  /** Examples of what went wrong, for the report. */
  details: string[];
  /** Every stuck job with its state, pods, BindRequests, events, cluster and quotas. */
  stuckJobs: string[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function backlogSafe(t: Topology): Promise<number | null> {
  return backlog(t).catch(() => null);
}

export async function runScenario(
  t: Topology,
  checker: Checker,
  fault: Fault,
  o: ScenarioOptions,
): Promise<FaultResult> {
  checker.take();
  const retriesBefore = t.client.retries;
  const load = new LoadGenerator(t.client, {
    rate: o.rate,
    maxSubmissions: Math.ceil(o.rate * (o.warmupSeconds + o.afterSeconds + 120)),
    clusters: [...t.agents.keys()],
    quotaEveryMs: 5000,
    seed: o.seed,
  });
  load.start();
  let recoverySeconds: number | null = null;
  let firstBindSeconds: number | null = null;
  try {
    const levels: number[] = [];
    for (let s = 0; s < o.warmupSeconds; s++) {
      await sleep(1000);
      const b = await backlogSafe(t);
      if (b !== null && s >= o.warmupSeconds / 2) levels.push(b);
    }
    const normal = Math.max(...levels, 0) * 1.2 + 5;
    o.log?.(`backlog before the fault: ${levels.join(" ")} (normal: at most ${normal.toFixed(0)})`);
    const at = await fault.inject(t);
    o.log?.(`fault injected ${((Date.now() - at) / 1000).toFixed(1)} s ago`);
    const afterEnd = Date.now() + o.afterSeconds * 1000;
    // recovery is watched up to a limit, not beyond
    const giveUp = Date.now() + Math.max(o.afterSeconds, o.watchSeconds ?? 60) * 1000;
    while (Date.now() < giveUp && (recoverySeconds === null || firstBindSeconds === null)) {
      const bind = firstBindAfter(t, at);
      if (bind !== null && firstBindSeconds === null) firstBindSeconds = (bind - at) / 1000;
      const b = await backlogSafe(t);
      if (b !== null && b <= normal && recoverySeconds === null) recoverySeconds = (Date.now() - at) / 1000;
      if (Math.round((Date.now() - at) / 500) % 10 === 0) o.log?.(`backlog ${b ?? "?"}`);
      await sleep(500);
    }
    if (Date.now() < afterEnd) await sleep(afterEnd - Date.now());
    const bind = firstBindAfter(t, at);
    if (firstBindSeconds === null && bind !== null) firstBindSeconds = (bind - at) / 1000;
  } finally {
    await load.stop();
  }
  o.log?.(`load stopped: ${load.accepted.size} accepted; settling`);
  const settleStart = Date.now();
  await settle(t, load, (o.settleSeconds ?? 60) * 1000, (o.settleLimitSeconds ?? 600) * 1000, o.log);
  const settleSeconds = (Date.now() - settleStart) / 1000;
  return judge(t, checker, fault, load, retriesBefore, recoverySeconds, firstBindSeconds, settleSeconds);
}

/**
 * Until every job this load submitted runs or finished (jobs an earlier fault left waiting are
 * that fault's, not this one's). A loaded machine drains a backlog slowly, so settling goes on
 * while it makes progress (the backlog or the jobs still waiting shrink) and gives up only after
 * `stallMs` without any (or after `limitMs` in all).
 */
async function settle(
  t: Topology,
  load: LoadGenerator,
  stallMs: number,
  limitMs: number,
  log?: (line: string) => void,
): Promise<void> {
  const end = Date.now() + limitMs;
  let best = Number.POSITIVE_INFINITY;
  let progressAt = Date.now();
  for (let i = 0; Date.now() < end && Date.now() - progressAt < stallMs; i++) {
    const jobs = await accountJobs(t, load).catch(() => null);
    const b = await backlogSafe(t);
    if (jobs && jobs.stuck.length === 0) return;
    const left = (b ?? Number.POSITIVE_INFINITY) + (jobs?.stuck.length ?? Number.POSITIVE_INFINITY);
    if (left < best) {
      best = left;
      progressAt = Date.now();
    }
    if (i % 10 === 0) log?.(`settling: backlog ${b ?? "?"}, stuck ${jobs?.stuck.length ?? "?"}`);
    await sleep(1000);
  }
}

async function judge(
  t: Topology,
  checker: Checker,
  fault: Fault,
  load: LoadGenerator,
  retriesBefore: number,
  recoverySeconds: number | null,
  firstBindSeconds: number | null,
  settleSeconds: number,
): Promise<FaultResult> {
  await checker.sample();
  const jobs = await accountJobs(t, load);
  const stuckJobs = await describeJobs(
    t,
    jobs.stuck.map((k) => load.accepted.get(k)!),
  ).catch((e: Error) => [`stuck jobs not described: ${e.message}`]);
  const ghosts = await checker.ghostPods();
  const strays = await checker.strayPods();
  const startedTooOften = await checker.podsStartedTooOften();
  const sampled = checker.details.slice(0, 8);
  const v = checker.take();
  const twice = new Set([...v.podsBoundTwice, ...startedTooOften]);
  const stray = new Set([...v.strayPods, ...strays.keys()]);
  const details = [
    ...jobs.lost.slice(0, 3).map((k) => `submission ${k} accepted but not stored`),
    ...jobs.duplicated.slice(0, 3).map((k) => `submission ${k} stored twice`),
    ...jobs.stuck.slice(0, 3).map((k) => `job of ${k} neither running nor finished`),
    ...[...twice].slice(0, 3).map((k) => `pod ${k} bound twice`),
    ...sampled,
    ...[...v.partialGangs].slice(0, 3).map((j) => `job ${j} partly running beyond the grace period`),
    ...[...v.limitBreaches].slice(0, 3).map((q) => `queue ${q} above its limit`),
    ...[...ghosts].slice(0, 3).map((p) => `pod ${p} RUNNING in the books, not in its cluster`),
    ...[...strays.values()].slice(0, 3),
    ...[...load.refused.values()].slice(0, 3).map((e) => `submission not accepted: ${e}`),
    ...load.errors.slice(0, 3),
  ];
  return {
    fault: fault.name,
    submissions: load.accepted.size,
    jobsLost: jobs.lost.length + jobs.duplicated.length,
    jobsStuck: jobs.stuck.length,
    podsBoundTwice: twice.size,
    overcommittedNodes: v.overcommittedNodes.size,
    overcommittedInClusters: v.overcommittedNodes.size - v.overcommittedInBooks.size,
    overcommittedInBooks: v.overcommittedInBooks.size,
    partialGangs: v.partialGangs.size,
    limitBreaches: v.limitBreaches.size,
    ghostPods: ghosts.size,
    strayPods: stray.size,
    recoverySeconds,
    firstBindSeconds,
    jobsMissing: jobs.lost.length,
    jobsDuplicated: jobs.duplicated.length,
    settleSeconds,
    submissionsRefused: load.refused.size,
    clientRetries: t.client.retries - retriesBefore,
    details,
    stuckJobs,
  };
}

/** The counts that must all be 0 (`except`: counts left out, e.g. a known fault of the books). */
export function failures(r: FaultResult, except: (keyof FaultResult)[] = []): string[] {
  const counts: Partial<Record<keyof FaultResult, number>> = {
    jobsLost: r.jobsLost,
    jobsStuck: r.jobsStuck,
    podsBoundTwice: r.podsBoundTwice,
    overcommittedInClusters: r.overcommittedInClusters,
    overcommittedInBooks: r.overcommittedInBooks,
    partialGangs: r.partialGangs,
    limitBreaches: r.limitBreaches,
    ghostPods: r.ghostPods,
    strayPods: r.strayPods,
    submissionsRefused: r.submissionsRefused,
  };
  return Object.entries(counts)
    .filter(([k, n]) => n > 0 && !except.includes(k as keyof FaultResult))
    .map(([k, n]) => `${k}: ${n}`);
}
