// The workers. Each cluster is owned by one worker at a time (a lease in PostgreSQL,
// ownership/): its scheduling cycles, start-time estimates and usage history run there, from that
// worker's cache of it, and move with the lease. Admission, the BindRequest outbox sweeper,
// lost-cluster checks, run-time limits, gang restarts, webhook fan-out and retention are fleet-wide: each a BullMQ
// queue that runs one job at a time across every worker process (serial-task.ts). Timers run them
// regularly; committed events (Redis pub/sub from the store) trigger them sooner. Run as many
// worker processes as you like: clusters spread evenly over them, one cluster's cycles never overlap.
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
  WEBHOOK_SOURCE_KINDS,
} from "../src/store/index.js";
import { runAdmission } from "./admission/run-admission.js";
import { DigestServer, OwnerDigests } from "./admission/owner-digests.js";
import { AdmissionState, fullReads, localDigests } from "./admission/state.js";
import { ClusterCycles } from "./cluster-cycles.js";
import { type CycleDeps, runCycle } from "./cycle/run-cycle.js";
import { LocalTask } from "./local-task.js";
import { ClusterOwnership } from "./ownership/cluster-ownership.js";
import { type WorkerSignal, WorkerSignals } from "./signals.js";
import { SearchCursorStore } from "./cycle/search-cursor-store.js";
import { BindDispatcher } from "./dispatch/bind-dispatcher.js";
import { sweepOutbox } from "./dispatch/sweep-outbox.js";
import { taskErrorsTotal } from "./metrics.js";
import { countingCommitted } from "../src/metrics/transition-metrics.js";
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
import { WebhookDeliveries } from "./webhooks/webhook-deliveries.js";
import { WebhookTask } from "./webhooks/run-webhooks.js";

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

/** A task beside the cycles, as startWorkers starts it. */
interface TaskSpec {
  /** "fleet": one run at a time across every worker process, its name the BullMQ queue's;
   * "local": this process's own, for the clusters it owns. */
  scope: "fleet" | "local";
  name: string;
  /** Its failures' `task` label in fleetq_worker_errors_total, when not its name. */
  errorLabel?: string;
  intervalMs: number;
  /** false: not started. */
  enabled?: boolean;
  /** `reason`: "timer" or what triggered it. A throw is counted and logged; the next run comes as usual. */
  run: (reason: string) => Promise<unknown>;
}

export interface RunningWorkers {
  /** The store the workers use (their database and event bus). */
  store: Store;
  /** Clusters this process owns (runs the cycles of). */
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
  const store = options.store ?? createStore(db!, countingCommitted(bus));
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

  let signals: WorkerSignals | null = null;
  const signal = async (sig: WorkerSignal) => {
    await signals?.send(sig);
  };
  const cycleDeps: CycleDeps = {
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
    lease: (cluster) => ownership.lease(cluster),
  };
  const cycles = new ClusterCycles(
    { intervalMs: o.cycleIntervalMs, triggerDelayMs: o.triggerDelayMs },
    // A LOST cluster gets no placements (nor evictions) until its agent reports again.
    async (cluster, reason) => {
      if (await clusterIsLost(store, cluster)) return;
      const report = await runCycle(cycleDeps, cluster, reason);
      // It committed what it placed so far; the rest of the backlog is the next cycle's.
      if (report.stoppedAtLimit) cycles.triggerHere([cluster], PLACEMENT_LIMIT_TRIGGER);
    },
    (clusters, reason) => signal({ kind: "cycles", clusters, reason }),
    log,
  );
  // Each cluster's cycles, and everything kept for them, live on the worker that owns it.
  const ownership = new ClusterOwnership(
    store,
    { workerId: o.workerId, leaseMs: o.clusterLeaseMs, renewMs: o.clusterLeaseRenewMs },
    {
      acquired: (cluster) => cycles.start(cluster, "takeover"),
      released: async (cluster) => {
        await cycles.stop(cluster);
        cycleDeps.cache.forget(cluster);
        digestServer.forget(cluster);
        cycleDeps.memory.delete(cluster);
        cycleDeps.carries.delete(cluster);
      },
      changed: () => signal({ kind: "ownership", from: o.workerId }),
      loading: () => cycles.loadingCount,
    },
    log,
  );
  cycles.onLoaded = () => void ownership.tick();
  const workersPrefix = `${o.prefix}workers`;
  // The tasks beside the cycles (estimates, usage history) run for the clusters owned here,
  // reading them through the cycles' cache.
  const views: ClusterViews = { cache: cycleDeps.cache, usage: usageWindow ?? undefined };
  // Admission keeps its cluster bases and undecided jobs between passes (on this process), built
  // from digests the clusters' owners compute from their caches.
  const digestServer = new DigestServer(
    connection,
    o.prefix,
    o.workerId,
    cycleDeps.cache,
    usageWindow ?? undefined,
    config,
    (cluster) => ownership.lease(cluster),
  );
  const waiting = new Redis(o.redisUrl, { maxRetriesPerRequest: null, lazyConnect: true });
  waiting.on("error", (err) => log.warn({ err: err.message }, "redis connection error (digests)"));
  const admissionState = new AdmissionState(
    new OwnerDigests(
      connection,
      waiting,
      o.prefix,
      signal,
      localDigests(fullReads(store)),
      o.admissionDigestTimeoutMs,
      log,
    ),
  );
  // Webhook deliveries are sent by every worker process; their fan-out is fleet-wide (below).
  const webhookDeliveries = WebhookDeliveries.start({
    store,
    connection,
    prefix: workersPrefix,
    attempts: o.webhookAttempts,
    backoffMs: o.webhookBackoffMs,
    disableAfter: o.webhookDisableAfter,
    timeoutMs: o.webhookTimeoutMs,
    concurrency: o.webhookConcurrency,
    lockDurationMs: o.lockDurationMs,
    log,
  });
  const webhooks = new WebhookTask(
    store,
    webhookDeliveries,
    {
      estimateGraceMs: o.webhookEstimateGraceMs,
      // A late start is found within a tenth of the grace period, at most every 30 s.
      estimateCheckMs: Math.min(30_000, Math.max(o.webhookIntervalMs, o.webhookEstimateGraceMs / 10)),
      publicUrl: o.publicUrl,
    },
    log,
  );
  // The tasks beside the cycles, started in this order: fleet-wide ones run one at a time across
  // every worker process (SerialTask), local ones for the clusters owned here (LocalTask).
  // When the estimates' previous run began: a run's budget is a share of the time since.
  let estimatedAt = Date.now();
  const specs: TaskSpec[] = [
    {
      scope: "fleet",
      name: "admission",
      intervalMs: o.admissionIntervalMs,
      run: async () => {
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
      },
    },
    {
      scope: "fleet",
      name: "outbox",
      errorLabel: "sweep",
      intervalMs: o.sweepIntervalMs,
      run: async () => {
        const r = await sweepOutbox(store, dispatcher, {
          pendingGraceMs: o.pendingDispatchGraceMs,
          redispatchAfterMs: o.redispatchAfterMs,
        });
        if (r.sent || r.resent) log.warn(r, "outbox sweeper sent BindRequests a cycle had not");
      },
    },
    {
      scope: "fleet",
      name: "lost-clusters",
      intervalMs: o.lostCheckIntervalMs,
      run: async () => {
        const r = await checkLostClusters(
          store,
          { lostAfterMs: o.clusterLostAfterMs, requeueAfterMs: o.requeueLostAfterMs },
          log,
        );
        if (r.readmitted || r.requeued) await fleet.get("admission")?.trigger("lost cluster");
      },
    },
    {
      scope: "fleet",
      name: "runtime-limits",
      intervalMs: o.runtimeLimitIntervalMs,
      run: async () => {
        const r = await checkRuntimeLimits(store, log);
        // The evictions go out with the clusters' next cycle; the freed resources go to others.
        if (r.clusters.length) await cycles.trigger(r.clusters, "run-time limit");
        if (r.stopped.length) await fleet.get("admission")?.trigger("run-time limit");
      },
    },
    {
      scope: "fleet",
      name: "restarts",
      intervalMs: o.restartHoldIntervalMs,
      run: async () => {
        const r = await releaseRestartedGangs(store, log);
        if (r.clusters.length) await cycles.trigger(r.clusters, "gang restart");
      },
    },
    {
      // Each interval recorded once per cluster, by its owner.
      scope: "local",
      name: "usage",
      intervalMs: o.usageIntervalMs,
      run: () =>
        recordUsage(store, config, o.usageIntervalMs / 1000, {
          window: usageWindow ?? undefined,
          views,
          clusters: cycles.loaded,
          retentionDays: o.usageRetentionDays,
        }),
    },
    {
      scope: "local",
      name: "estimates",
      intervalMs: o.estimateIntervalMs,
      enabled: o.estimateIntervalMs > 0,
      run: async () => {
        const started = Date.now();
        // A cluster's first cycle loads it; estimates wait for that rather than load it themselves.
        const owned = cycles.loaded;
        const budgetMs = runBudgetMs(
          o.estimateBudgetMs,
          o.estimateCpuShare,
          started - estimatedAt,
          owned.length,
        );
        estimatedAt = started;
        await runEstimates(store, config, {
          horizonMs: o.estimateHorizonSeconds * 1000,
          maxSessions: o.estimateMaxSessions,
          budgetMs,
          usageWindow,
          views,
          clusters: owned,
        });
      },
    },
    {
      scope: "fleet",
      name: "webhooks",
      intervalMs: o.webhookIntervalMs,
      run: () => webhooks.run(),
    },
    {
      scope: "fleet",
      name: "retention",
      intervalMs: o.retentionIntervalMs,
      enabled: o.retentionDays > 0,
      run: async () => {
        const before = new Date(Date.now() - o.retentionDays * 86_400_000);
        const pruned = await pruneHistory(store, before);
        if (pruned.events || pruned.bindRequests || pruned.jobs)
          log.info({ ...pruned, before }, "pruned history past the retention period");
      },
    },
  ];
  const fleet = new Map<string, SerialTask>();
  const local = new Map<string, LocalTask>();
  const stopTasks = () => Promise.allSettled([...fleet.values(), ...local.values()].map((t) => t.stop()));
  try {
    signals = await WorkerSignals.open(connection, o.redisUrl, o.prefix, log, (s) => {
      if (s.kind === "cycles") cycles.triggerHere(s.clusters, s.reason);
      else if (s.kind === "digests")
        digestServer.answer(s).catch((err) => log.warn({ err: err.message }, "could not answer for digests"));
      else if (s.from !== o.workerId) void ownership.tick();
    });
    for (const spec of specs) {
      if (spec.enabled === false) continue;
      const run = guarded(spec.errorLabel ?? spec.name, spec.run);
      const { name, intervalMs } = spec;
      if (spec.scope === "fleet")
        fleet.set(
          name,
          await SerialTask.start({ ...task, prefix: workersPrefix, name, intervalMs, log, run }),
        );
      else local.set(name, new LocalTask({ name, intervalMs, triggerDelayMs: 0, log, run }));
    }
    await ownership.start();
  } catch (err) {
    await ownership.stop();
    await stopTasks();
    await closeConnections();
    throw err;
  }

  const coalescer = new TriggerCoalescer(
    {
      cycles: async (clusters, reason) => cycles.triggerHere(clusters, reason),
      admission: (reason) => fleet.get("admission")!.trigger(reason),
      restarts: (reason) => fleet.get("restarts")!.trigger(reason),
      clusterList: () => ownership.tick(),
    },
    (err) => log.warn({ err: err.message }, "could not trigger work"),
  );
  const unlistenCycles = await bus.listen((e) => coalescer.add(triggersFor(e)));
  // Estimates follow changes, at most every estimateMinGapMs.
  let estimateAsked = 0;
  const estimates = local.get("estimates");
  const unlistenEstimates = await bus.listen((e) => {
    if (!estimates || !ESTIMATE_TRIGGERS.has(e.kind) || Date.now() - estimateAsked < o.estimateMinGapMs)
      return;
    estimateAsked = Date.now();
    estimates.trigger("change");
  });
  const unlistenWebhooks = await bus.listen((e) => {
    // Events webhooks report: the webhook task fans them out soon after.
    if (WEBHOOK_SOURCE_KINDS.has(e.kind))
      fleet
        .get("webhooks")
        ?.trigger("event")
        .catch((err) => log.warn({ err: err.message }, "could not trigger the webhook task"));
  });
  const unlisten = () => {
    unlistenCycles();
    unlistenEstimates();
    unlistenWebhooks();
  };
  log.info({ actions: config.actions, leaseMs: o.clusterLeaseMs }, "workers started");

  async function closeConnections(): Promise<void> {
    signals?.close();
    waiting.disconnect();
    await webhookDeliveries.close();
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
        unlisten();
        // The clusters go first, so other workers take them over while the rest stops.
        await ownership.stop();
        await stopTasks();
        await closeConnections();
        log.info("workers stopped");
      })();
      return stopping;
    },
  };
}
