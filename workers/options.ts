// startWorkers' options: what each one means, its default, and the check that turns bad values
// into one clear error before anything starts.
import { hostname } from "node:os";
import type { Logger } from "pino";
import type { SchedulerConfig } from "../src/core/index.js";
import {
  DEFAULT_CLUSTER_LOST_AFTER_MS,
  DEFAULT_USAGE_RETENTION_DAYS,
  DEFAULT_WEBHOOK_DISABLE_AFTER,
  type Store,
} from "../src/store/index.js";

export interface WorkerOptions {
  /** postgresql://… (or pglite:<dir> for a one-process demo). Ignored when `store` is given. */
  databaseUrl: string;
  /** redis://… — BullMQ queues and the event channel. */
  redisUrl: string;
  /** Namespace shared with the API (its `redisPrefix`, default "fleetq:"): the workers listen on
   * `<prefix>events` and keep their own queues under `<prefix>cycle` (one BullMQ queue per
   * cluster) and `<prefix>workers` (admission, outbox, usage). */
  prefix?: string;
  /** Key prefix of the bind queues the agents consume (their `queuePrefix`; default "bind"). */
  bindQueuePrefix?: string;
  /** The secret BindRequests are signed with, the API's too (default FLEETQ_BIND_SECRET, else one
   * of this process's own: API and workers in one process). */
  bindSecret?: string;
  /** Actions and plugins of each cycle. Default: the file named by FLEETQ_SCHEDULER_CONFIG,
   * else the core's defaults (all five actions, KAI's plugin list). */
  schedulerConfig?: SchedulerConfig;
  /** Every cluster gets a cycle at least this often (default 1000 ms); new work triggers one sooner. */
  cycleIntervalMs?: number;
  /** A cycle places at most about this many pods (default 2000; 0 = no limit): allocate stops
   * between jobs once it placed that many, the cycle commits and dispatches them, and the next
   * cycle follows at once. A large backlog then reaches the agents as it is decided, instead of
   * all of it after one long cycle. */
  maxPlacementsPerCycle?: number;
  /** Admission runs at least this often (default 2000 ms); submissions trigger it sooner. */
  admissionIntervalMs?: number;
  /** The outbox sweeper's period (default 5000 ms). */
  sweepIntervalMs?: number;
  /** A BindRequest sent this long ago without a result is sent again (default 30 000 ms). */
  redispatchAfterMs?: number;
  /** The sweeper leaves BindRequests younger than this to the cycle that committed them (default 2000 ms). */
  pendingDispatchGraceMs?: number;
  /** How often allocations are recorded as usage history (default 60 000 ms). */
  usageIntervalMs?: number;
  /** Events, closed BindRequests and finished jobs older than this are deleted (default 30; 0 = kept). */
  retentionDays?: number;
  /** How often the retention task runs (default 3 600 000 ms). */
  retentionIntervalMs?: number;
  /** Hourly usage rollups (chargeback) are kept this many days (default 400; whole days, > 0). */
  usageRetentionDays?: number;
  /** Time-based fair share: decayed usage feeds the proportion plugin. Default off (plain fair share). */
  timeBasedFairShare?: { halfLifeSeconds: number; windowSeconds?: number } | null;
  /** A job admission placed that is still entirely unplaced after this long may move to another
   * cluster where it fits now (default 600 000 ms; 0 = never). */
  readmitAfterMs?: number;
  /** An admission pass goes through every unadmitted job in chunks of at most this many jobs
   * (default 1000)… */
  admissionBatch?: number;
  /** …and about this many pods (default 2000; a larger job is taken alone): each chunk's decisions
   * are committed, and their clusters' cycles triggered, before the next chunk is read. */
  admissionBatchPods?: number;
  /** After a failed bind the pod waits base·2^(failures−1) ms, at most max, before a retry
   * (default 2000 and 60 000). */
  bindBackoff?: { baseMs: number; maxMs: number };
  /** An admission pass waits this long for the clusters' owners to send their digests (default
   * 10 000 ms); a cluster whose owner has not answered keeps the base of the previous pass. */
  admissionDigestTimeoutMs?: number;
  /** A cycle whose snapshot went stale before its commit is re-run at most this often (default 5). */
  staleRetries?: number;
  /** BullMQ lock of a running admission pass, sweep or other fleet-wide task (default 30 000 ms):
   * a dead worker's run is taken over only after it expires. */
  lockDurationMs?: number;
  /** How often BullMQ looks for jobs of dead workers (default 15 000 ms). */
  stalledIntervalMs?: number;
  /** A cluster whose agent is silent this long is LOST: no admissions or placements there, and
   * its jobs with no pod placed go back to admission (default 120 000 ms). */
  clusterLostAfterMs?: number;
  /** Jobs with pods placed on a cluster LOST this long are requeued elsewhere (default 0 = off:
   * they wait for the agent, as their pods may still run). */
  requeueLostAfterMs?: number;
  /** How often lost clusters are looked for (default 5000 ms). */
  lostCheckIntervalMs?: number;
  /** How often jobs past their maxRuntimeSeconds are looked for and stopped (default 5000 ms):
   * a job is stopped at most this long after its limit. */
  runtimeLimitIntervalMs?: number;
  /** How often restarted gangs are looked at (default 1000 ms): a gang's next attempt is placed at
   * most this long after its previous attempt's pods stopped and its backoff passed. */
  restartHoldIntervalMs?: number;
  /** Triggered cycles wait this long so a burst of work makes one cycle (default 0). */
  triggerDelayMs?: number;
  /** Each cluster's cycles run on one worker, which holds the cluster's lease and renews it; a
   * lease not renewed for this long lapses and another worker takes the cluster over (default
   * 10 000 ms): it bounds how long a killed worker's clusters wait. A worker that stops hands
   * its clusters over at once. */
  clusterLeaseMs?: number;
  /** How often a worker renews its leases and looks at the clusters' spread over the live
   * workers again (default 1000 ms; less than half of clusterLeaseMs). Cluster events make it
   * look at once. */
  clusterLeaseRenewMs?: number;
  /** Start-time estimates (Job.estimatedStart) are recomputed at least this often (default
   * 30 000 ms; 0 = never), and after changes (submissions, pods ending, quotas) at most every
   * `estimateMinGapMs` (default 10 000 ms). */
  estimateIntervalMs?: number;
  estimateMinGapMs?: number;
  /** How far ahead the estimator simulates each cluster (default 86 400 s = 24 h). */
  estimateHorizonSeconds?: number;
  /** At most this many scheduling sessions per cluster per estimate run (default 200)… */
  estimateMaxSessions?: number;
  /** …and at most this much computation per cluster per run (default 5000 ms), giving way to the
   * process's cycles between sessions… */
  estimateBudgetMs?: number;
  /** …and at most this share of the time since the process's previous run began, over all the
   * clusters it owns (default 0.1): estimates following every change of busy clusters take at most
   * a tenth of a core from their cycles (a run always gets 250 ms per cluster). */
  estimateCpuShare?: number;
  /** How often pending webhook events are fanned out to deliveries, late start estimates checked
   * and lost deliveries queued again (default 2000 ms); the events themselves trigger it sooner. */
  webhookIntervalMs?: number;
  /** Attempts per webhook delivery before it is given up (default 8). */
  webhookAttempts?: number;
  /** The first retry's delay; each next one doubles it (default 2000 ms: 2 s, 4 s, … 128 s). */
  webhookBackoffMs?: number;
  /** A webhook is disabled after this many failed deliveries in a row (default 10). */
  webhookDisableAfter?: number;
  /** A webhook request without an answer this long fails (default 10 000 ms). */
  webhookTimeoutMs?: number;
  /** Deliveries sent at once by this process (default 16). */
  webhookConcurrency?: number;
  /** job.waiting_past_estimate: a pending job this long past the start first estimated for it
   * (default 600 000 ms). */
  webhookEstimateGraceMs?: number;
  /** The dashboard's public address, the `link` of webhook payloads (default none: null). */
  publicUrl?: string;
  /** Write an event for every cycle, even one that decided nothing (default false: busy cycles only). */
  logIdleCycles?: boolean;
  /** Names this process in the event log and logs (default <hostname>:<pid>). */
  workerId?: string;
  logger?: Logger;
  /** An open store to use (`fleetq dev` shares the API's); its database stays the caller's. */
  store?: Store;
}

export type ResolvedOptions = Required<
  Omit<WorkerOptions, "schedulerConfig" | "logger" | "store" | "timeBasedFairShare">
> & {
  timeBasedFairShare: { halfLifeSeconds: number; windowSeconds: number } | null;
};

export class WorkerOptionsError extends Error {
  override name = "WorkerOptionsError";
}

const DEFAULTS = {
  prefix: "fleetq:",
  bindQueuePrefix: "bind",
  cycleIntervalMs: 1000,
  maxPlacementsPerCycle: 2000,
  admissionIntervalMs: 2000,
  sweepIntervalMs: 5000,
  redispatchAfterMs: 30_000,
  pendingDispatchGraceMs: 2000,
  usageIntervalMs: 60_000,
  retentionDays: 30,
  retentionIntervalMs: 3_600_000,
  usageRetentionDays: DEFAULT_USAGE_RETENTION_DAYS,
  readmitAfterMs: 600_000,
  admissionBatch: 1000,
  admissionBatchPods: 2000,
  bindBackoff: { baseMs: 2000, maxMs: 60_000 },
  staleRetries: 5,
  admissionDigestTimeoutMs: 10_000,
  lockDurationMs: 30_000,
  stalledIntervalMs: 15_000,
  triggerDelayMs: 0,
  clusterLostAfterMs: DEFAULT_CLUSTER_LOST_AFTER_MS,
  requeueLostAfterMs: 0,
  lostCheckIntervalMs: 5000,
  runtimeLimitIntervalMs: 5000,
  restartHoldIntervalMs: 1000,
  clusterLeaseMs: 10_000,
  clusterLeaseRenewMs: 1000,
  logIdleCycles: false,
  estimateIntervalMs: 30_000,
  estimateMinGapMs: 10_000,
  estimateHorizonSeconds: 86_400,
  estimateMaxSessions: 200,
  estimateBudgetMs: 5000,
  estimateCpuShare: 0.1,
  webhookIntervalMs: 2000,
  webhookAttempts: 8,
  webhookBackoffMs: 2000,
  webhookDisableAfter: DEFAULT_WEBHOOK_DISABLE_AFTER,
  webhookTimeoutMs: 10_000,
  webhookConcurrency: 16,
  webhookEstimateGraceMs: 600_000,
  publicUrl: "",
};

/** Admission's chunks by default (a dry run cuts the jobs as a pass of default workers does). */
export const DEFAULT_ADMISSION_CHUNK = { jobs: DEFAULTS.admissionBatch, pods: DEFAULTS.admissionBatchPods };

function check(ok: boolean, field: string, message: string): void {
  if (!ok) throw new WorkerOptionsError(`workers: ${field} ${message}`);
}

const positive = (v: number, field: string) =>
  check(Number.isFinite(v) && v > 0, field, `must be a positive number of milliseconds (got ${v})`);
const nonNegative = (v: number, field: string) =>
  check(Number.isFinite(v) && v >= 0, field, `must be a number >= 0 (got ${v})`);

export function resolveOptions(o: WorkerOptions): ResolvedOptions {
  check(
    !!o.store || (typeof o.databaseUrl === "string" && o.databaseUrl !== ""),
    "databaseUrl",
    "is required",
  );
  check(
    typeof o.redisUrl === "string" && /^rediss?:\/\//.test(o.redisUrl),
    "redisUrl",
    "must be a redis:// URL",
  );
  const r = { ...DEFAULTS, workerId: `${hostname()}:${process.pid}`, ...stripUndefined(o) };
  check(!r.bindQueuePrefix.includes(" "), "bindQueuePrefix", "must not contain spaces");
  for (const k of [
    "cycleIntervalMs",
    "admissionIntervalMs",
    "sweepIntervalMs",
    "redispatchAfterMs",
    "usageIntervalMs",
    "retentionIntervalMs",
    "lockDurationMs",
    "stalledIntervalMs",
    "clusterLeaseMs",
    "admissionDigestTimeoutMs",
    "clusterLeaseRenewMs",
    "clusterLostAfterMs",
    "estimateBudgetMs",
    "lostCheckIntervalMs",
    "runtimeLimitIntervalMs",
    "restartHoldIntervalMs",
    "webhookIntervalMs",
    "webhookBackoffMs",
    "webhookTimeoutMs",
  ] as const)
    positive(r[k], k);
  for (const k of ["webhookAttempts", "webhookDisableAfter", "webhookConcurrency"] as const)
    check(Number.isInteger(r[k]) && r[k] > 0, k, `must be a whole number above 0 (got ${r[k]})`);
  for (const k of [
    "pendingDispatchGraceMs",
    "readmitAfterMs",
    "triggerDelayMs",
    "staleRetries",
    "requeueLostAfterMs",
    "retentionDays",
    "estimateIntervalMs",
    "estimateMinGapMs",
    "webhookEstimateGraceMs",
  ] as const)
    nonNegative(r[k], k);
  check(r.publicUrl === "" || /^https?:\/\//.test(r.publicUrl), "publicUrl", "must be an http(s) URL");
  check(
    Number.isInteger(r.maxPlacementsPerCycle) && r.maxPlacementsPerCycle >= 0,
    "maxPlacementsPerCycle",
    `must be a whole number >= 0 (got ${r.maxPlacementsPerCycle})`,
  );
  check(
    Number.isFinite(r.estimateHorizonSeconds) && r.estimateHorizonSeconds > 0,
    "estimateHorizonSeconds",
    "must be a positive number of seconds",
  );
  check(
    Number.isFinite(r.estimateCpuShare) && r.estimateCpuShare > 0 && r.estimateCpuShare <= 1,
    "estimateCpuShare",
    `must be a number above 0 and at most 1 (got ${r.estimateCpuShare})`,
  );
  check(
    Number.isInteger(r.estimateMaxSessions) && r.estimateMaxSessions > 0,
    "estimateMaxSessions",
    "must be a positive integer",
  );
  check(
    Number.isInteger(r.admissionBatch) && r.admissionBatch > 0,
    "admissionBatch",
    "must be a positive integer",
  );
  check(
    Number.isInteger(r.usageRetentionDays) && r.usageRetentionDays > 0,
    "usageRetentionDays",
    `must be a positive whole number of days (got ${r.usageRetentionDays})`,
  );
  check(
    Number.isInteger(r.admissionBatchPods) && r.admissionBatchPods > 0,
    "admissionBatchPods",
    "must be a positive integer",
  );
  check(
    r.clusterLeaseRenewMs * 2 < r.clusterLeaseMs,
    "clusterLeaseRenewMs",
    `must be less than half of clusterLeaseMs (got ${r.clusterLeaseRenewMs} and ${r.clusterLeaseMs})`,
  );
  positive(r.bindBackoff.baseMs, "bindBackoff.baseMs");
  check(r.bindBackoff.maxMs >= r.bindBackoff.baseMs, "bindBackoff.maxMs", "must be >= bindBackoff.baseMs");
  let timeBased: ResolvedOptions["timeBasedFairShare"] = null;
  if (o.timeBasedFairShare) {
    const { halfLifeSeconds, windowSeconds } = o.timeBasedFairShare;
    check(
      Number.isFinite(halfLifeSeconds) && halfLifeSeconds > 0,
      "timeBasedFairShare.halfLifeSeconds",
      "must be a positive number",
    );
    const window = windowSeconds ?? halfLifeSeconds * 24;
    check(window >= halfLifeSeconds, "timeBasedFairShare.windowSeconds", "must be >= halfLifeSeconds");
    timeBased = { halfLifeSeconds, windowSeconds: window };
  }
  const { schedulerConfig: _c, logger: _l, store: _s, ...rest } = r as typeof r & WorkerOptions;
  return { ...rest, timeBasedFairShare: timeBased } as ResolvedOptions;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
