// Runs the workers from the environment (what `fleetq worker` does):
//   DATABASE_URL (required), REDIS_URL (default redis://127.0.0.1:6379),
//   FLEETQ_REDIS_PREFIX (default "fleetq:", the API's), FLEETQ_BIND_QUEUE_PREFIX (default "bind"),
//   FLEETQ_SCHEDULER_CONFIG (a scheduler configuration file), FLEETQ_WORKER_ID,
//   FLEETQ_CYCLE_INTERVAL_MS, FLEETQ_ADMISSION_INTERVAL_MS, FLEETQ_SWEEP_INTERVAL_MS,
//   FLEETQ_REDISPATCH_AFTER_MS, FLEETQ_USAGE_INTERVAL_MS, FLEETQ_READMIT_AFTER_MS,
//   FLEETQ_USAGE_HALF_LIFE_SECONDS (turns time-based fair share on), FLEETQ_LOCK_DURATION_MS,
//   FLEETQ_STALLED_INTERVAL_MS, FLEETQ_TRIGGER_DELAY_MS, FLEETQ_LOG_IDLE_CYCLES=1, FLEETQ_LOG_LEVEL.
import { startWorkers, type WorkerOptions } from "./index.js";

function numberEnv(name: string): number | undefined {
  const v = process.env[name];
  if (v === undefined || v === "") return undefined;
  const n = Number(v);
  if (!Number.isFinite(n)) {
    console.error(`fleetq workers: ${name} must be a number (got ${JSON.stringify(v)})`);
    process.exit(2);
  }
  return n;
}

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) {
  console.error("fleetq workers: DATABASE_URL is required");
  process.exit(2);
}
const halfLife = numberEnv("FLEETQ_USAGE_HALF_LIFE_SECONDS");
const options: WorkerOptions = {
  databaseUrl,
  redisUrl: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
  prefix: process.env.FLEETQ_REDIS_PREFIX || undefined,
  bindQueuePrefix: process.env.FLEETQ_BIND_QUEUE_PREFIX || undefined,
  workerId: process.env.FLEETQ_WORKER_ID || undefined,
  cycleIntervalMs: numberEnv("FLEETQ_CYCLE_INTERVAL_MS"),
  admissionIntervalMs: numberEnv("FLEETQ_ADMISSION_INTERVAL_MS"),
  sweepIntervalMs: numberEnv("FLEETQ_SWEEP_INTERVAL_MS"),
  redispatchAfterMs: numberEnv("FLEETQ_REDISPATCH_AFTER_MS"),
  usageIntervalMs: numberEnv("FLEETQ_USAGE_INTERVAL_MS"),
  readmitAfterMs: numberEnv("FLEETQ_READMIT_AFTER_MS"),
  lockDurationMs: numberEnv("FLEETQ_LOCK_DURATION_MS"),
  stalledIntervalMs: numberEnv("FLEETQ_STALLED_INTERVAL_MS"),
  triggerDelayMs: numberEnv("FLEETQ_TRIGGER_DELAY_MS"),
  timeBasedFairShare: halfLife ? { halfLifeSeconds: halfLife } : null,
  logIdleCycles: process.env.FLEETQ_LOG_IDLE_CYCLES === "1",
};

let workers: Awaited<ReturnType<typeof startWorkers>>;
try {
  workers = await startWorkers(options);
} catch (err) {
  console.error(`fleetq workers: ${(err as Error).message}`);
  process.exit(1);
}
console.log(`fleetq workers running (clusters: ${workers.clusters().join(", ") || "none yet"})`);

const stop = async () => {
  await workers.stop();
  process.exit(0);
};
process.once("SIGINT", stop);
process.once("SIGTERM", stop);
