// `fleetq worker`: the scheduling workers (cycles, admission, outbox, usage) with a small HTTP
// endpoint for Prometheus and probes (/metrics, /healthz) on FLEETQ_WORKER_PORT (default 9464).
// Environment: DATABASE_URL, REDIS_URL, FLEETQ_REDIS_PREFIX, FLEETQ_BIND_QUEUE_PREFIX,
// FLEETQ_BIND_SECRET and FLEETQ_INSECURE_REDIS (redis-check.ts), FLEETQ_SCHEDULER_CONFIG and the tuning variables of worker-options.ts.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { metrics as workerMetrics, startWorkers } from "../../../workers/index.js";
import { processMetrics, renderMetrics } from "../../metrics/metrics-endpoint.js";
import { transitionMetrics } from "../../metrics/transition-metrics.js";
import { DEFAULT_REDIS_URL } from "../../protocol/defaults.js";
import { CliError } from "../exit-codes.js";
import { redact } from "../database-admin.js";
import { bindSecretOf, insecureRedisAllowed, refuseOpenRedis } from "./redis-check.js";
import { portOf } from "../env.js";
import { Lifecycle } from "../lifecycle.js";
import { createLogger, flushLogger } from "../logger.js";
import { workerOptionsFromEnv } from "../worker-options.js";
import { Registry } from "prom-client";

export async function runWorker(opts: { metricsPort?: string; insecureRedis?: boolean }): Promise<void> {
  const log = createLogger("fleetq-worker");
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) {
    throw new CliError(
      "fleetq worker needs DATABASE_URL (postgresql://…): the embedded database serves one process only; " +
        "for a one-process control plane run `fleetq dev`",
    );
  }
  const redisUrl = process.env.REDIS_URL || DEFAULT_REDIS_URL;
  // Settings first: a mistyped variable is reported before anything is reached.
  const settings = workerOptionsFromEnv({ databaseUrl, redisUrl, logger: log });
  const allowOpen = insecureRedisAllowed(opts.insecureRedis);
  await refuseOpenRedis(redisUrl, allowOpen, log);
  const bindSecret = bindSecretOf(allowOpen, log);
  const workers = await startWorkers({ ...settings, bindSecret });
  const life = new Lifecycle(log);
  life.add({ name: "workers", stop: () => workers.stop() });
  const port =
    portOf(opts.metricsPort ?? process.env.FLEETQ_WORKER_PORT, "--metrics-port/FLEETQ_WORKER_PORT") ?? 9464;
  // The workers' own metrics, and the transitions this process committed (transition-metrics.ts).
  const server = await listen(port, () => [processMetrics(), workerMetrics, transitionMetrics]);
  life.add({ name: "metrics endpoint", stop: () => new Promise((r) => server.close(() => r())) });
  log.info(
    {
      database: redact(databaseUrl),
      redis: redact(redisUrl),
      metricsPort: (server.address() as AddressInfo).port,
    },
    "workers running",
  );
  await life.untilSignal();
  await flushLogger(log);
  // Stopped cleanly; a library\'s leftover timer must not keep the process alive.
  process.exit(0);
}

function listen(port: number, registries: () => Registry[]): Promise<http.Server> {
  const server = http.createServer(async (req, res) => {
    if (req.url === "/healthz") {
      res.writeHead(200, { "content-type": "application/json" }).end('{"status":"ok"}');
    } else if (req.url === "/metrics") {
      try {
        const body = await renderMetrics(registries());
        res.writeHead(200, { "content-type": Registry.PROMETHEUS_CONTENT_TYPE }).end(body);
      } catch (e) {
        res.writeHead(500).end(`metrics unavailable: ${(e as Error).message}\n`);
      }
    } else {
      res.writeHead(404).end();
    }
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, () => resolve(server));
  });
}
