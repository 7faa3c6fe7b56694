// The start-time estimates: each cluster's live snapshot is simulated forward with the scheduling
// core (src/estimate), running jobs ending at their expected end, and the estimated start of every
// pending job on it is stored for the API (Job.estimatedStart / estimatedCluster). Each worker
// estimates the clusters it owns, on a timer and soon after changes; a job waiting for admission
// is estimated on every cluster that may take it, and keeps the earliest start any gave.
//
// Run times, in this order: the job's expectedRuntimeSeconds, else its maxRuntimeSeconds, else its
// queue's running estimate from the run times of its last 50 jobs that succeeded in the last 7 days
// (their median; for a job already running, the median of those that ran longer than it has so
// far); none of them = unknown (the job holds its room past the horizon; jobs waiting on it get no
// estimate). Cost is bounded per cluster: at most `maxSessions` sessions, `horizonMs` ahead and
// `budgetMs` of computation, giving way to the process's cycles between sessions.
import type { SchedulerConfig } from "../../src/core/index.js";
import {
  DEFAULT_HORIZON_MS,
  DEFAULT_MAX_SESSIONS,
  type EstimateResult,
  type JobRuntime,
  runtimeOf,
} from "../../src/estimate/estimate-starts.js";
import { estimateStepsWithArrivals, type RecentJob } from "../../src/estimate/scenarios.js";
import {
  admissionCandidatesByIds,
  clusterSummaries,
  jobRuntimeHints,
  queueRuntimeSamples,
  replaceJobEstimates,
  type Store,
  unadmittedJobs,
  type UsageWindow,
} from "../../src/store/index.js";
import { matchesSelector } from "../admission/selector.js";
import { type ClusterViews, clusterView } from "../cluster-views.js";

/** Jobs waiting for admission estimated per run, first in admission's order. */
export const MAX_UNADMITTED_ESTIMATED = 200;

export interface EstimateOptions {
  horizonMs?: number;
  maxSessions?: number;
  /** Wall-clock computation per cluster per run (default 5000 ms): the estimate stops there. */
  budgetMs?: number;
  usageWindow?: UsageWindow | null;
  now?: Date;
  /** The cycles' cached views: each cluster is brought up to date from what changed since instead
   * of read in full. Absent = a full read per cluster. */
  views?: ClusterViews;
  /** Only these clusters (the worker's own); absent: every cluster. */
  clusters?: readonly string[];
}

export const DEFAULT_BUDGET_MS = 5_000;
/** What a run may always compute per cluster, however soon it follows the previous one. */
export const MIN_BUDGET_MS = 250;

/**
 * The computation a run may spend per cluster: `share` of the time since the previous run began
 * (estimates follow every change, at most every few seconds, of a cluster whose sessions may take
 * a second each), split over the `clusters` the run estimates, at least MIN_BUDGET_MS, at most
 * `maxMs`.
 */
export function runBudgetMs(maxMs: number, share: number, sincePreviousMs: number, clusters = 1): number {
  return Math.min(maxMs, Math.max(MIN_BUDGET_MS, (share * sincePreviousMs) / Math.max(1, clusters)));
}
/** Jobs submitted this long before a run are the pattern of those still to come. */
export const RECENT_WINDOW_MS = 3_600_000;

export interface EstimateReport {
  clusters: number;
  jobs: number;
  estimated: number;
  sessions: number;
}

export async function runEstimates(
  store: Store,
  config: SchedulerConfig,
  opts: EstimateOptions = {},
): Promise<EstimateReport> {
  const now = opts.now ?? new Date();
  const report: EstimateReport = { clusters: 0, jobs: 0, estimated: 0, sessions: 0 };
  const queueSeconds = await queueRuntimeSamples(store, now);
  const queueRuntimeSamplesMs = new Map([...queueSeconds].map(([q, list]) => [q, list.map((s) => s * 1000)]));
  // Jobs no cluster was given yet (none can run them now): estimated on every cluster their
  // selector allows, as if waiting there; the earliest start is theirs.
  const unadmitted = await admissionCandidatesByIds(
    store,
    (await unadmittedJobs(store)).slice(0, MAX_UNADMITTED_ESTIMATED).map((j) => j.id),
  );
  const waitingIds = new Set(unadmitted.map((c) => c.spec.uid));
  const only = opts.clusters ? new Set(opts.clusters) : null;
  for (const cluster of await clusterSummaries(store)) {
    if (only && !only.has(cluster.name)) continue;
    // A lost cluster places nothing until its agent is back: no estimate holds there.
    if (cluster.lost) {
      await replaceJobEstimates(store, cluster.name, [], now);
      continue;
    }
    const loaded = await clusterView(
      store,
      cluster.name,
      now.getTime(),
      opts.views,
      opts.usageWindow ?? undefined,
    );
    const extra = cluster.cordoned
      ? []
      : unadmitted.filter((c) => matchesSelector(cluster.labels, c.clusterSelector));
    const topologies = new Map(loaded.snapshot.topologies.map((t) => [t.name, t]));
    for (const c of extra) for (const t of c.topologies) topologies.set(t.name, t);
    const snapshot = {
      ...loaded.snapshot,
      jobs: [...loaded.snapshot.jobs, ...extra.map((c) => c.spec)],
      topologies: [...topologies.values()],
    };
    const hints = await jobRuntimeHints(
      store,
      snapshot.jobs.map((j) => j.uid),
    );
    const runtimes = new Map<string, JobRuntime>();
    for (const [id, h] of hints)
      runtimes.set(id, {
        expectedMs: h.expectedSeconds === null ? null : h.expectedSeconds * 1000,
        maxMs: h.maxSeconds === null ? null : h.maxSeconds * 1000,
      });
    // The cluster's jobs submitted in the last hour (still pending or running) stand for the jobs
    // still to come: scenarios of arrivals at their rate, the median start over them.
    const recent: RecentJob[] = [];
    for (const j of snapshot.jobs) {
      if (j.createdAt <= now.getTime() - RECENT_WINDOW_MS) continue;
      const runtimeMs = runtimeOf(j, { runtimes, queueRuntimeSamplesMs });
      if (runtimeMs !== null) recent.push({ job: j, runtimeMs });
    }
    // One session at a time, giving way to the process's other work (its cycles) in between.
    const steps = estimateStepsWithArrivals(snapshot, config, {
      runtimes,
      queueRuntimeSamplesMs,
      recent,
      recentWindowMs: RECENT_WINDOW_MS,
      horizonMs: opts.horizonMs ?? DEFAULT_HORIZON_MS,
      maxSessions: opts.maxSessions ?? DEFAULT_MAX_SESSIONS,
    });
    const deadline = Date.now() + (opts.budgetMs ?? DEFAULT_BUDGET_MS);
    let r: EstimateResult;
    for (;;) {
      const s = steps.next();
      r = s.value;
      if (s.done || Date.now() > deadline) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    const rows = [...r.starts]
      .filter(([jobId]) => !waitingIds.has(jobId))
      .map(([jobId, start]) => ({
        jobId,
        cluster: cluster.name,
        start: start === null ? null : new Date(start),
      }));
    const offers = extra.map((c) => {
      const start = r.starts.get(c.spec.uid) ?? null;
      return { jobId: c.spec.uid, cluster: cluster.name, start: start === null ? null : new Date(start) };
    });
    await replaceJobEstimates(store, cluster.name, rows, now, offers);
    report.clusters++;
    report.jobs += rows.length + offers.length;
    report.estimated += [...rows, ...offers].filter((x) => x.start !== null).length;
    report.sessions += r.sessions;
  }
  return report;
}
