// The start-time estimates: each cluster's live snapshot is simulated forward with the scheduling
// core (src/estimate), running jobs ending at their expected end, and the estimated start of every
// pending job on it is stored for the API (Job.estimatedStart / estimatedCluster). One run at a
// time across every worker (a serial task), on a timer and soon after changes.
//
// Run times, in this order: the job's expectedRuntimeSeconds, else its maxRuntimeSeconds, else its
// queue's running estimate (the median run time of its last 50 jobs that succeeded in the last 7
// days); none of them = unknown (the job holds its room past the horizon; jobs waiting on it get no
// estimate). Cost is bounded per cluster: at most `maxSessions` sessions, `horizonMs` ahead and
// `budgetMs` of computation, giving way to the process's cycles between sessions.
import type { SchedulerConfig } from "../../src/core/index.js";
import {
  DEFAULT_HORIZON_MS,
  DEFAULT_MAX_SESSIONS,
  type EstimateResult,
  estimateSteps,
  type JobRuntime,
} from "../../src/estimate/estimate-starts.js";
import {
  clusterSnapshot,
  clusterSummaries,
  jobRuntimeHints,
  queueRuntimeEstimates,
  replaceJobEstimates,
  type Store,
  type UsageWindow,
} from "../../src/store/index.js";

export interface EstimateOptions {
  horizonMs?: number;
  maxSessions?: number;
  /** Wall-clock computation per cluster per run (default 5000 ms): the estimate stops there. */
  budgetMs?: number;
  usageWindow?: UsageWindow | null;
  now?: Date;
}

export const DEFAULT_BUDGET_MS = 5_000;

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
  const queueSeconds = await queueRuntimeEstimates(store, now);
  const queueRuntimeMs = new Map([...queueSeconds].map(([q, s]) => [q, s * 1000]));
  for (const cluster of await clusterSummaries(store)) {
    // A lost cluster places nothing until its agent is back: no estimate holds there.
    if (cluster.lost) {
      await replaceJobEstimates(store, cluster.name, [], now);
      continue;
    }
    const { snapshot } = await clusterSnapshot(store, cluster.name, {
      now: now.getTime(),
      usage: opts.usageWindow ?? undefined,
    });
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
    // One session at a time, giving way to the process's other work (its cycles) in between.
    const steps = estimateSteps(snapshot, config, {
      runtimes,
      queueRuntimeMs,
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
    const rows = [...r.starts].map(([jobId, start]) => ({
      jobId,
      cluster: cluster.name,
      start: start === null ? null : new Date(start),
    }));
    await replaceJobEstimates(store, cluster.name, rows, now);
    report.clusters++;
    report.jobs += rows.length;
    report.estimated += rows.filter((x) => x.start !== null).length;
    report.sessions += r.sessions;
  }
  return report;
}
