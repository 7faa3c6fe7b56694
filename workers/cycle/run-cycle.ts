// One scheduling cycle of one cluster: bring the process's cached view of the cluster up to date
// → skip when nothing it could decide has changed (skip-check.ts) → hold back pods in bind
// backoff → run the session (configured actions and plugins) → commit, fenced by the cluster's
// generation (a view gone stale meanwhile is refreshed and the session re-run) → send the new
// BindRequests to the cluster's agent. Victim searches the last cycle's budget stopped go on.
// Recorded as metrics and, when it did something or failed, as a "cycle.completed"/"cycle.failed"
// event that carries its worker, start, end and timings as data. A cycle whose cluster moved to
// another worker meanwhile (its commit refused, or no lease left to commit under) is no failure:
// it is dropped, counted as such, and the cluster's new owner decides from then on.
import type { Logger } from "pino";
import { runSession, type SchedulerConfig, SessionCarry, type SessionResult } from "../../src/core/index.js";
import {
  type CachedCluster,
  type ClusterCache,
  type CommitResult,
  commitSession,
  type CycleEventData,
  LeaseLostError,
  type EventData,
  pendingPodBindFailures,
  recordEvents,
  StaleSnapshotError,
  type Store,
  type UsageWindow,
} from "../../src/store/index.js";
import type { BindDispatcher } from "../dispatch/bind-dispatcher.js";
import {
  cycleDuration,
  cyclePhase,
  cyclesTotal,
  decisionsTotal,
  stoppedSearches,
  staleRetriesTotal,
  taskErrorsTotal,
} from "../metrics.js";
import { type BackoffPolicy, gateBackedOffPods } from "./bind-backoff.js";
import { isIdleResult } from "./idle-result.js";
import type { SearchCursorStore } from "./search-cursor-store.js";
import { type CycleMemory, canSkip, cycleHoldsUntil } from "./skip-check.js";

export interface CycleDeps {
  store: Store;
  config: SchedulerConfig;
  dispatcher: BindDispatcher;
  /** Time-based fair share: the usage window snapshots decay with; null = off. */
  usageWindow: UsageWindow | null;
  backoff: BackoffPolicy;
  staleRetries: number;
  /** Pods a cycle places at most before it commits (allocate stops between jobs); 0 = no limit. */
  maxPlacements: number;
  logIdleCycles: boolean;
  workerId: string;
  log: Logger;
  /** The process's cached views of the clusters. */
  cache: ClusterCache;
  /** Per cluster, what this process's last cycle decided on (skip-check.ts). */
  memory: Map<string, CycleMemory>;
  /** Per cluster, the jobs and nodes of this process's last session there, for the next (the
   * cached view hands unchanged jobs and nodes over as the same spec objects). */
  carries: Map<string, SessionCarry>;
  /** The victim searches the last cycle's budget stopped, per cluster. */
  searchCursors: SearchCursorStore;
  /** The lease this worker holds on the cluster (its commits carry it); null: not (surely) its
   * own any more, so no cycle runs. Absent: cycles without ownership (tests, tools). */
  lease?: (cluster: string) => { owner: string; epoch: number } | null;
}

export interface CycleReport {
  cluster: string;
  startedAt: Date;
  endedAt: Date;
  binds: number;
  evictions: number;
  pipelines: number;
  /** BindRequests put on the bind queue (this cycle's and any left PENDING). */
  dispatched: number;
  staleRetries: number;
  /** Jobs whose state the commit changed. */
  jobsChanged: number;
  /** The cycle could not decide anything new (skip-check.ts): not run. */
  skipped: boolean;
  /** The session stopped at the cycle's placement limit: the next cycle may place more. */
  stoppedAtLimit: boolean;
  /** Where the time went (ms; over every attempt): the view's refresh with the bind backoff and
   * search cursors, the session, the commit, sending the BindRequests. */
  timings: { loadMs: number; sessionMs: number; commitMs: number; dispatchMs: number };
  error: string | null;
  /** The cluster moved to another worker during the cycle: nothing it decided was committed. */
  leaseLost: boolean;
}

const SCHEDULER = { name: "scheduler" };

export async function runCycle(deps: CycleDeps, cluster: string, reason: string): Promise<CycleReport> {
  const startedAt = new Date();
  const report: CycleReport = {
    cluster,
    startedAt,
    endedAt: startedAt,
    binds: 0,
    evictions: 0,
    pipelines: 0,
    dispatched: 0,
    staleRetries: 0,
    jobsChanged: 0,
    skipped: false,
    stoppedAtLimit: false,
    timings: { loadMs: 0, sessionMs: 0, commitMs: 0, dispatchMs: 0 },
    error: null,
    leaseLost: false,
  };
  try {
    if (deps.lease && !deps.lease(cluster)) {
      report.skipped = true;
      return report;
    }
    const decided = await decideAndCommit(deps, cluster, report);
    if (!decided) {
      report.skipped = true;
      cyclesTotal.inc({ cluster, outcome: "skipped" });
      return report;
    }
    const { result, commit } = decided;
    report.binds = result.binds.length;
    report.evictions = result.evictions.length;
    report.pipelines = result.pipelines.length;
    report.stoppedAtLimit = !!result.stoppedAtLimit;
    report.jobsChanged = commit.jobs.length;
    if (commit.bindRequests.length)
      deps.log.info({ cluster, bindRequests: commit.bindRequests.length }, "cycle committed; dispatching");
    const sending = performance.now();
    report.dispatched = await deps.dispatcher.send(commit.bindRequests, "cycle");
    report.dispatched += await deps.dispatcher.sendPending(cluster);
    report.timings.dispatchMs = performance.now() - sending;
  } catch (err) {
    if (err instanceof LeaseLostError) {
      report.leaseLost = true;
      deps.log.warn({ cluster, err: err.message }, "cycle dropped: the cluster moved to another worker");
    } else {
      report.error = (err as Error).message;
      taskErrorsTotal.inc({ task: "cycle" });
      deps.log.error({ cluster, err: report.error }, "cycle failed");
    }
  }
  report.endedAt = new Date();
  await recordCycle(deps, report, reason);
  return report;
}

/** null: skipped. */
async function decideAndCommit(
  deps: CycleDeps,
  cluster: string,
  report: CycleReport,
): Promise<{ result: SessionResult; commit: CommitResult } | null> {
  for (let attempt = 0; ; attempt++) {
    const started = performance.now();
    const now = Date.now();
    try {
      // The view's rows are planned and committed from: no other refresh of the cluster (an
      // estimate run's) may change them before the commit is done.
      return await deps.cache.use(cluster, { now, usage: deps.usageWindow ?? undefined }, (view) =>
        decideOn(deps, view, report, started, now),
      );
    } catch (err) {
      deps.memory.delete(cluster);
      if (!(err instanceof StaleSnapshotError) || attempt >= deps.staleRetries) throw err;
      report.staleRetries++;
      staleRetriesTotal.inc({ cluster });
    }
  }
}

/** One attempt on an up-to-date view: skip, or run the session and commit its result. */
async function decideOn(
  deps: CycleDeps,
  view: CachedCluster,
  report: CycleReport,
  started: number,
  now: number,
): Promise<{ result: SessionResult; commit: CommitResult } | null> {
  const t = report.timings;
  const cluster = report.cluster;
  const cursors = await deps.searchCursors.load(cluster);
  if (canSkip(deps.memory.get(cluster), view, cursors.length, now)) {
    t.loadMs += performance.now() - started;
    return null;
  }
  const { snapshot, generation, rows } = view;
  const failures = await pendingPodBindFailures(deps.store, cluster);
  const waiting = gateBackedOffPods(snapshot, failures, deps.backoff);
  snapshot.searchCursors = cursors;
  t.loadMs += performance.now() - started;
  let phase = performance.now();
  const carry = deps.carries.get(cluster) ?? new SessionCarry();
  deps.carries.set(cluster, carry);
  const result = runSession(snapshot, deps.config, { carry, maxPlacements: deps.maxPlacements });
  t.sessionMs += performance.now() - phase;
  stoppedSearches.set({ cluster }, result.searchCursors.length);
  for (const outcome of result.jobs) {
    const note = waiting.get(outcome.uid);
    if (note) outcome.fitErrors = [note, ...outcome.fitErrors];
  }
  const decided: CycleMemory = {
    version: view.version,
    holdsUntil: cycleHoldsUntil(snapshot, result, deps.config, failures, deps.backoff),
  };
  if (isIdleResult(snapshot, result)) {
    deps.memory.set(cluster, decided);
    await deps.searchCursors.save(cluster, result.searchCursors);
    return { result, commit: { generation, bindRequests: [], jobs: [] } };
  }
  phase = performance.now();
  let commit: CommitResult;
  try {
    const lease = deps.lease?.(cluster);
    if (deps.lease && !lease) throw new LeaseLostError(cluster, deps.workerId, null, null, null);
    commit = await commitSession(deps.store, cluster, generation, result, rows, {
      lease: lease ?? undefined,
    });
  } finally {
    t.commitMs += performance.now() - phase;
  }
  deps.memory.set(cluster, decided);
  await deps.searchCursors.save(cluster, result.searchCursors);
  return { result, commit };
}

async function recordCycle(deps: CycleDeps, r: CycleReport, reason: string): Promise<void> {
  const busy = r.binds + r.evictions + r.pipelines + r.dispatched + r.jobsChanged > 0;
  const outcome = r.leaseLost ? "lease_lost" : r.error ? "failed" : busy ? "committed" : "idle";
  const seconds = (r.endedAt.getTime() - r.startedAt.getTime()) / 1000;
  cycleDuration.observe({ cluster: r.cluster, outcome }, seconds);
  const t = r.timings;
  const phases = { load: t.loadMs, session: t.sessionMs, commit: t.commitMs, dispatch: t.dispatchMs };
  // A phase the cycle did not reach (an idle session's commit) is no sample of that phase's time.
  for (const [phase, ms] of Object.entries(phases))
    if (ms > 0) cyclePhase.observe({ cluster: r.cluster, phase }, ms / 1000);
  cyclesTotal.inc({ cluster: r.cluster, outcome });
  decisionsTotal.inc({ cluster: r.cluster, kind: "bind" }, r.binds);
  decisionsTotal.inc({ cluster: r.cluster, kind: "evict" }, r.evictions);
  decisionsTotal.inc({ cluster: r.cluster, kind: "pipeline" }, r.pipelines);
  // A dropped cycle changed nothing; the new owner's cycles are the cluster's record.
  if (outcome === "lease_lost" || (outcome === "idle" && !deps.logIdleCycles)) return;
  try {
    await recordEvents(deps.store, SCHEDULER, [
      {
        kind: r.error ? "cycle.failed" : "cycle.completed",
        cluster: r.cluster,
        message: cycleMessage(deps, r, reason),
        data: cycleData(deps, r),
      },
    ]);
  } catch (err) {
    deps.log.warn({ cluster: r.cluster, err: (err as Error).message }, "could not record the cycle event");
  }
}

/** "cycle on c1 by host:42 [start → end] 12 ms (trigger: timer): 3 bind(s), …; load 4 ms, …", for people;
 * tools read the event's data (cycleData). */
export function cycleMessage(deps: Pick<CycleDeps, "workerId">, r: CycleReport, reason: string): string {
  const ms = r.endedAt.getTime() - r.startedAt.getTime();
  const head = `cycle on ${r.cluster} by ${deps.workerId} [${r.startedAt.toISOString()} → ${r.endedAt.toISOString()}] ${ms} ms (trigger: ${reason})`;
  if (r.error) return `${head}: failed: ${r.error}`;
  return (
    `${head}: ${r.binds} bind(s), ${r.evictions} eviction(s), ${r.pipelines} pipelined, ` +
    `${r.dispatched} BindRequest(s) sent, ${r.jobsChanged} job(s) changed state, ${r.staleRetries} stale retry(ies)` +
    (r.stoppedAtLimit ? ", stopped at the placement limit" : "") +
    `; ${timingsText(r.timings)}`
  );
}

const timingsText = (t: CycleReport["timings"]) =>
  `load ${Math.round(t.loadMs)} ms, session ${Math.round(t.sessionMs)} ms, ` +
  `commit ${Math.round(t.commitMs)} ms, dispatch ${Math.round(t.dispatchMs)} ms`;

/** The event's data: what tools read instead of the message. */
function cycleData(deps: Pick<CycleDeps, "workerId">, r: CycleReport): CycleEventData {
  const t = r.timings;
  return {
    worker: deps.workerId,
    startedAt: r.startedAt.toISOString(),
    endedAt: r.endedAt.toISOString(),
    timings: {
      loadMs: Math.round(t.loadMs),
      sessionMs: Math.round(t.sessionMs),
      commitMs: Math.round(t.commitMs),
      dispatchMs: Math.round(t.dispatchMs),
    },
  };
}

const CYCLE_KINDS = new Set(["cycle.completed", "cycle.failed"]);

/** A cycle event's worker and interval (epoch ms); null when the event is not a cycle's. */
export function cycleInterval(e: {
  kind: string;
  data?: EventData | null;
}): { worker: string; start: number; end: number } | null {
  if (!CYCLE_KINDS.has(e.kind) || !e.data) return null;
  const d = e.data as CycleEventData;
  return { worker: d.worker, start: Date.parse(d.startedAt), end: Date.parse(d.endedAt) };
}
