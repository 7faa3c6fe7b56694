// `fleetq worker` and `fleetq dev`: the workers' options from the environment:
//   FLEETQ_REDIS_PREFIX (default "fleetq:", the API's), FLEETQ_BIND_QUEUE_PREFIX (default "bind"),
//   FLEETQ_SCHEDULER_CONFIG (a scheduler configuration file), FLEETQ_WORKER_ID,
//   FLEETQ_CYCLE_INTERVAL_MS, FLEETQ_ADMISSION_INTERVAL_MS, FLEETQ_SWEEP_INTERVAL_MS,
//   FLEETQ_REDISPATCH_AFTER_MS, FLEETQ_USAGE_INTERVAL_MS, FLEETQ_READMIT_AFTER_MS,
//   FLEETQ_USAGE_HALF_LIFE_SECONDS (turns time-based fair share on), FLEETQ_LOCK_DURATION_MS,
//   FLEETQ_STALLED_INTERVAL_MS, FLEETQ_TRIGGER_DELAY_MS, FLEETQ_CLUSTER_LOST_AFTER_MS,
//   FLEETQ_REQUEUE_LOST_AFTER_MS, FLEETQ_RUNTIME_LIMIT_INTERVAL_MS, FLEETQ_LOG_IDLE_CYCLES=1,
//   FLEETQ_ESTIMATE_INTERVAL_MS, FLEETQ_ESTIMATE_HORIZON_SECONDS, FLEETQ_ESTIMATE_MAX_SESSIONS,
//   FLEETQ_ESTIMATE_BUDGET_MS, FLEETQ_ESTIMATE_CPU_SHARE, FLEETQ_MAX_PLACEMENTS_PER_CYCLE,
//   FLEETQ_CLUSTER_LEASE_MS, FLEETQ_CLUSTER_LEASE_RENEW_MS, FLEETQ_USAGE_RETENTION_DAYS,
//   FLEETQ_WEBHOOK_INTERVAL_MS, FLEETQ_WEBHOOK_ATTEMPTS,
//   FLEETQ_WEBHOOK_BACKOFF_MS, FLEETQ_WEBHOOK_DISABLE_AFTER, FLEETQ_WEBHOOK_TIMEOUT_MS,
//   FLEETQ_WEBHOOK_ESTIMATE_GRACE_MS, FLEETQ_PUBLIC_URL.
import type { Logger } from "pino";
import type { WorkerOptions } from "../../workers/index.js";
import { numberEnv } from "./env.js";
import { schedulerConfigFromEnv } from "./scheduler-config.js";

export function workerOptionsFromEnv(
  base: { databaseUrl: string; redisUrl: string; logger: Logger },
  env: NodeJS.ProcessEnv = process.env,
): WorkerOptions {
  const halfLife = numberEnv("FLEETQ_USAGE_HALF_LIFE_SECONDS", env);
  return {
    ...base,
    prefix: env.FLEETQ_REDIS_PREFIX || undefined,
    bindQueuePrefix: env.FLEETQ_BIND_QUEUE_PREFIX || undefined,
    workerId: env.FLEETQ_WORKER_ID || undefined,
    schedulerConfig: schedulerConfigFromEnv(env),
    cycleIntervalMs: numberEnv("FLEETQ_CYCLE_INTERVAL_MS", env),
    maxPlacementsPerCycle: numberEnv("FLEETQ_MAX_PLACEMENTS_PER_CYCLE", env),
    admissionIntervalMs: numberEnv("FLEETQ_ADMISSION_INTERVAL_MS", env),
    sweepIntervalMs: numberEnv("FLEETQ_SWEEP_INTERVAL_MS", env),
    redispatchAfterMs: numberEnv("FLEETQ_REDISPATCH_AFTER_MS", env),
    usageIntervalMs: numberEnv("FLEETQ_USAGE_INTERVAL_MS", env),
    retentionDays: numberEnv("FLEETQ_RETENTION_DAYS", env),
    usageRetentionDays: numberEnv("FLEETQ_USAGE_RETENTION_DAYS", env),
    readmitAfterMs: numberEnv("FLEETQ_READMIT_AFTER_MS", env),
    lockDurationMs: numberEnv("FLEETQ_LOCK_DURATION_MS", env),
    stalledIntervalMs: numberEnv("FLEETQ_STALLED_INTERVAL_MS", env),
    triggerDelayMs: numberEnv("FLEETQ_TRIGGER_DELAY_MS", env),
    clusterLostAfterMs: numberEnv("FLEETQ_CLUSTER_LOST_AFTER_MS", env),
    clusterLeaseMs: numberEnv("FLEETQ_CLUSTER_LEASE_MS", env),
    clusterLeaseRenewMs: numberEnv("FLEETQ_CLUSTER_LEASE_RENEW_MS", env),
    requeueLostAfterMs: numberEnv("FLEETQ_REQUEUE_LOST_AFTER_MS", env),
    runtimeLimitIntervalMs: numberEnv("FLEETQ_RUNTIME_LIMIT_INTERVAL_MS", env),
    restartHoldIntervalMs: numberEnv("FLEETQ_RESTART_HOLD_INTERVAL_MS", env),
    estimateIntervalMs: numberEnv("FLEETQ_ESTIMATE_INTERVAL_MS", env),
    estimateHorizonSeconds: numberEnv("FLEETQ_ESTIMATE_HORIZON_SECONDS", env),
    estimateMaxSessions: numberEnv("FLEETQ_ESTIMATE_MAX_SESSIONS", env),
    estimateBudgetMs: numberEnv("FLEETQ_ESTIMATE_BUDGET_MS", env),
    estimateCpuShare: numberEnv("FLEETQ_ESTIMATE_CPU_SHARE", env),
    webhookIntervalMs: numberEnv("FLEETQ_WEBHOOK_INTERVAL_MS", env),
    webhookAttempts: numberEnv("FLEETQ_WEBHOOK_ATTEMPTS", env),
    webhookBackoffMs: numberEnv("FLEETQ_WEBHOOK_BACKOFF_MS", env),
    webhookDisableAfter: numberEnv("FLEETQ_WEBHOOK_DISABLE_AFTER", env),
    webhookTimeoutMs: numberEnv("FLEETQ_WEBHOOK_TIMEOUT_MS", env),
    webhookEstimateGraceMs: numberEnv("FLEETQ_WEBHOOK_ESTIMATE_GRACE_MS", env),
    publicUrl: env.FLEETQ_PUBLIC_URL || undefined,
    timeBasedFairShare: halfLife ? { halfLifeSeconds: halfLife } : null,
    logIdleCycles: env.FLEETQ_LOG_IDLE_CYCLES === "1",
  };
}
