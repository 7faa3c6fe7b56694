// The workers: per-cluster scheduling cycles, admission, the BindRequest outbox sweeper, the
// usage recorder, run-time limits (jobs past maxRuntimeSeconds stopped) and retention (old history pruned), each a BullMQ queue of its own that runs one job at a time across every worker
// process (serial-task.ts). Timers (BullMQ job schedulers) run them regularly; committed events
// (Redis pub/sub from the store) trigger them sooner, deduplicated. Run as many worker processes
// as you like: different clusters' cycles run in parallel, one cluster's never overlap.
//
//   const workers = await startWorkers({ databaseUrl, redisUrl });   // options: see options.ts
//   …
//   await workers.stop();
import { Redis } from "ioredis";
import { pino } from "pino";
import {
  ClusterCache,
  clusterIsLost,
  createStore,
  openDatabase,
  pruneHistory,
  RedisEventBus,
  type Store,
} from "../src/store/index.js";
import { runAdmission } from "./admission/run-admission.js";
import { AdmissionState } from "./admission/state.js";
import { ClusterCycles } from "./cluster-cycles.js";
import { runCycle } from "./cycle/run-cycle.js";
import { SearchCursorStore } from "./cycle/search-cursor-store.js";
import { BindDispatcher } from "./dispatch/bind-dispatcher.js";
import { sweepOutbox } from "./dispatch/sweep-outbox.js";
import { taskErrorsTotal } from "./metrics.js";
import { resolveOptions, type WorkerOptions } from "./options.js";
import { resolveSchedulerConfig } from "./scheduler-config.js";
import { SerialTask } from "./serial-task.js";
import { TriggerCoalescer } from "./trigger-coalescer.js";
import { PLACEMENT_LIMIT_TRIGGER, triggersFor } from "./triggers.js";
import { checkLostClusters } from "./lost/check-lost-clusters.js";
import { checkRuntimeLimits } from "./limits/check-runtime-limits.js";
import { releaseRestartedGangs } from "./restarts/release-restarted-gangs.js";
import { recordUsage } from "./usage/record-usage.js";
import type { ClusterViews } from "./cluster-views.js";
import { runBudgetMs, runEstimates } from "./estimates/run-estimates.js";

export { metrics } from "./metrics.js";
export { type WorkerOptions, WorkerOptionsError } from "./options.js";
export { SCHEDULER_CONFIG_ENV, schedulerConfigFromFile } from "./scheduler-config.js";
export { runCycle, cycleInterval, type CycleReport } from "./cycle/run-cycle.js";
export { runAdmission, type AdmissionReport } from "./admission/run-admission.js";
export { AdmissionState, type ClusterSource, fullReads } from "./admission/state.js";
export { sweepOutbox, type SweepReport } from "./dispatch/sweep-outbox.js";
export { recordUsage } from "./usage/record-usage.js";
export { runEstimates, type EstimateReport } from "./estimates/run-estimates.js";
export { checkRuntimeLimits } from "./limits/check-runtime-limits.js";

/** Events after which start-time estimates are recomputed: jobs came or went, pods ended, room or
 * shares changed. */
const ESTIMATE_TRIGGERS = new Set([
  "job.submitted",
  "job.assigned",
  "job.reassigned",
  "job.cancelled",
  "pods.status",
  "pods.vanished",
  "bind.result",
  "nodes.reported",
  "quota.set",
  "queue.created",
  "queue.updated",
  "queue.deleted",
]);

export interface RunningWorkers {
  /** The store the workers use (their database and event bus). */
  store: Store;
  /** Clusters this process runs cycles for. */
  clusters(): string[];
  /** Waits for running cycles/passes to finish, then closes every connection. */
  stop(): Promise<void>;
}

export async function startWorkers(options: WorkerOptions): Promise<RunningWorkers> {
  const o = resolveOptions(options);
  const config = resolveSchedulerConfig(options.schedulerConfig);
  const log = (
    options.logger ?? pino({ name: "fleetq-workers", level: process.env.FLEETQ_LOG_LEVEL ?? "info" })
  ).child({ worker: o.workerId });
  const db = options.store ? null : await openDatabase(o.databaseUrl);
  const bus = new RedisEventBus(o.redisUrl, o.prefix);
  const store = options.store ?? createStore(db!, bus);
  // BullMQ: commands wait for a reconnect instead of failing (maxRetriesPerRequest null).
  const connection = new Redis(o.redisUrl, { maxRetriesPerRequest: null });
  connection.on("error", (err) => log.warn({ err: err.message }, "redis connection error"));
  const dispatcher = new BindDispatcher(store, connection, o.bindQueuePrefix, options.bindSecret);
  const usageWindow = o.timeBasedFairShare;
  const task = {
    connection,
    lockDurationMs: o.lockDurationMs,
    stalledIntervalMs: o.stalledIntervalMs,
    triggerDelayMs: o.triggerDelayMs,
  };
  const guarded = (name: string, fn: (reason: string) => Promise<unknown>) => async (reason: string) => {
    try {
      await fn(reason);
    } catch (err) {
      taskErrorsTotal.inc({ task: name });
      log.error({ task: name, err: (err as Error).message }, "worker task failed; it will run again");
    }
  };

  const cycleDeps = {
    store,
    config,
    dispatcher,
    usageWindow,
    backoff: o.bindBackoff,
    staleRetries: o.staleRetries,
    maxPlacements: o.maxPlacementsPerCycle,
    logIdleCycles: o.logIdleCycles,
    workerId: o.workerId,
    log,
    cache: new ClusterCache(store, {
      onCatchUp: (cluster, changes) =>
        log.debug({ cluster, ...changes }, "catching up with the cluster's changes"),
    }),
    memory: new Map(),
    carries: new Map(),
    searchCursors: new SearchCursorStore(connection, o.prefix, log),
  };
  const cycles = new ClusterCycles(
    store,
    { ...task, prefix: `${o.prefix}cycle`, intervalMs: o.cycleIntervalMs },
    // A LOST cluster gets no placements (nor evictions) until its agent reports again.
    async (cluster, reason) => {
      if (await clusterIsLost(store, cluster)) return;
      const report = await runCycle(cycleDeps, cluster, reason);
      // It committed what it placed so far; the rest of the backlog is the next cycle's.
      if (report.stoppedAtLimit) await cycles.trigger([cluster], PLACEMENT_LIMIT_TRIGGER);
    },
    log,
  );
  const workersPrefix = `${o.prefix}workers`;
  // The tasks beside the cycles (estimates, usage history) read clusters through the cycles' cache.
  const views: ClusterViews = { cache: cycleDeps.cache, usage: usageWindow ?? undefined };
  // Admission keeps its cluster bases and undecided jobs between passes (on this process).
  // Its own cache: `unchanged` is relative to the cache's previous refresh, which must be its own.
  const admissionState = new AdmissionState(new ClusterCache(store));
  let admission: SerialTask | null = null;
  let estimates: SerialTask | null = null;
  let restarts: SerialTask | null = null;
  const tasks: SerialTask[] = [];
  try {
    await cycles.refresh();
    admission = await SerialTask.start({
      ...task,
      prefix: workersPrefix,
      name: "admission",
      intervalMs: o.admissionIntervalMs,
      log,
      run: guarded("admission", async () => {
        await runAdmission({
          store,
          config,
          usageWindow,
          readmitAfterMs: o.readmitAfterMs,
          batch: o.admissionBatch,
          batchPods: o.admissionBatchPods,
          // Each chunk's clusters get their cycle at once, while the pass goes on.
          onAssigned: (clusters) => cycles.trigger(clusters, "admission"),
          state: admissionState,
          log,
        });
      }),
    });
    tasks.push(admission);
    tasks.push(
      await SerialTask.start({
        ...task,
        prefix: workersPrefix,
        name: "outbox",
        intervalMs: o.sweepIntervalMs,
        log,
        run: guarded("sweep", async () => {
          const r = await sweepOutbox(store, dispatcher, {
            pendingGraceMs: o.pendingDispatchGraceMs,
            redispatchAfterMs: o.redispatchAfterMs,
          });
          if (r.sent || r.resent) log.warn(r, "outbox sweeper sent BindRequests a cycle had not");
        }),
      }),
    );
    tasks.push(
      await SerialTask.start({
        ...task,
        prefix: workersPrefix,
        name: "lost-clusters",
        intervalMs: o.lostCheckIntervalMs,
        log,
        run: guarded("lost-clusters", async () => {
          const r = await checkLostClusters(
            store,
            { lostAfterMs: o.clusterLostAfterMs, requeueAfterMs: o.requeueLostAfterMs },
            log,
          );
          if (r.readmitted || r.requeued) await admission?.trigger("lost cluster");
        }),
      }),
    );
    tasks.push(
      await SerialTask.start({
        ...task,
        prefix: workersPrefix,
        name: "runtime-limits",
        intervalMs: o.runtimeLimitIntervalMs,
        log,
        run: guarded("runtime-limits", async () => {
          const r = await checkRuntimeLimits(store, log);
          // The evictions go out with the clusters' next cycle; the freed resources go to others.
          if (r.clusters.length) await cycles.trigger(r.clusters, "run-time limit");
          if (r.stopped.length) await admission?.trigger("run-time limit");
        }),
      }),
    );
    restarts = await SerialTask.start({
      ...task,
      prefix: workersPrefix,
      name: "restarts",
      intervalMs: o.restartHoldIntervalMs,
      log,
      run: guarded("restarts", async () => {
        const r = await releaseRestartedGangs(store, log);
        if (r.clusters.length) await cycles.trigger(r.clusters, "gang restart");
      }),
    });
    tasks.push(restarts);
    tasks.push(
      await SerialTask.start({
        ...task,
        prefix: workersPrefix,
        name: "usage",
        intervalMs: o.usageIntervalMs,
        log,
        run: guarded("usage", () =>
          recordUsage(store, config, o.usageIntervalMs / 1000, { window: usageWindow ?? undefined, views }),
        ),
      }),
    );
    if (o.estimateIntervalMs > 0) {
      // Budgets are a share of the time since the previous run of this process began.
      let estimatedAt = Date.now();
      estimates = await SerialTask.start({
        ...task,
        prefix: workersPrefix,
        name: "estimates",
        intervalMs: o.estimateIntervalMs,
        log,
        run: guarded("estimates", async () => {
          const started = Date.now();
          const budgetMs = runBudgetMs(o.estimateBudgetMs, o.estimateCpuShare, started - estimatedAt);
          estimatedAt = started;
          await runEstimates(store, config, {
            horizonMs: o.estimateHorizonSeconds * 1000,
            maxSessions: o.estimateMaxSessions,
            budgetMs,
            usageWindow,
            views,
          });
        }),
      });
      tasks.push(estimates);
    }
    if (o.retentionDays > 0) {
      tasks.push(
        await SerialTask.start({
          ...task,
          prefix: workersPrefix,
          name: "retention",
          intervalMs: o.retentionIntervalMs,
          log,
          run: guarded("retention", async () => {
            const before = new Date(Date.now() - o.retentionDays * 86_400_000);
            const pruned = await pruneHistory(store, before);
            if (pruned.events || pruned.bindRequests || pruned.jobs)
              log.info({ ...pruned, before }, "pruned history past the retention period");
          }),
        }),
      );
    }
  } catch (err) {
    await Promise.allSettled([cycles.stop(), ...tasks.map((t) => t.stop())]);
    await closeConnections();
    throw err;
  }

  const coalescer = new TriggerCoalescer(
    {
      cycles: (clusters, reason) => cycles.trigger(clusters, reason),
      admission: (reason) => admission!.trigger(reason),
      restarts: (reason) => restarts!.trigger(reason),
      clusterList: () => cycles.refresh(),
    },
    (err) => log.warn({ err: err.message }, "could not trigger work"),
  );
  const unlistenCycles = await bus.listen((e) => coalescer.add(triggersFor(e)));
  // Estimates follow changes, at most every estimateMinGapMs.
  let estimateAsked = 0;
  const unlistenEstimates = await bus.listen((e) => {
    if (!estimates || !ESTIMATE_TRIGGERS.has(e.kind) || Date.now() - estimateAsked < o.estimateMinGapMs)
      return;
    estimateAsked = Date.now();
    estimates.trigger("change").catch((err) => log.warn({ err: err.message }, "could not trigger estimates"));
  });
  const unlisten = () => {
    unlistenCycles();
    unlistenEstimates();
  };
  const refresher = setInterval(() => void cycles.refresh(), o.clusterRefreshMs);
  log.info({ clusters: cycles.clusters, actions: config.actions }, "workers started");

  async function closeConnections(): Promise<void> {
    await dispatcher.close();
    await bus.close();
    connection.disconnect();
    await db?.close();
  }

  let stopping: Promise<void> | null = null;
  return {
    store,
    clusters: () => cycles.clusters,
    stop: () => {
      stopping ??= (async () => {
        clearInterval(refresher);
        unlisten();
        await Promise.allSettled([cycles.stop(), ...tasks.map((t) => t.stop())]);
        await closeConnections();
        log.info("workers stopped");
      })();
      return stopping;
    },
  };
}
