// `fleetq serve`: the API server alone (GraphQL + subscriptions, dashboard at /, /metrics,
// /healthz, /readyz). Environment: DATABASE_URL, REDIS_URL, FLEETQ_PORT, FLEETQ_HOST,
// FLEETQ_ADMIN_TOKEN, FLEETQ_REDIS_PREFIX, FLEETQ_BIND_SECRET and FLEETQ_INSECURE_REDIS (redis-check.ts), and the
// per-token limits of api-options.ts.
import { createApiServer } from "../../api/server.js";
import { DEFAULT_DATABASE_URL, migrateDeploy } from "../../store/index.js";
import { rateLimitsFromEnv } from "../api-options.js";
import { schedulerConfigFromEnv } from "../scheduler-config.js";
import { redact } from "../database-admin.js";
import { DEFAULT_REDIS_URL } from "../../protocol/defaults.js";
import { bindSecretOf, insecureRedisAllowed, refuseOpenRedis } from "./redis-check.js";
import { portOf } from "../env.js";
import { Lifecycle } from "../lifecycle.js";
import { createLogger, flushLogger } from "../logger.js";

export async function runServe(opts: {
  port?: string;
  host?: string;
  migrate?: boolean;
  insecureRedis?: boolean;
}): Promise<void> {
  const log = createLogger("fleetq-api");
  const databaseUrl = process.env.DATABASE_URL || DEFAULT_DATABASE_URL;
  const redisUrl = process.env.REDIS_URL || DEFAULT_REDIS_URL;
  const allowOpen = insecureRedisAllowed(opts.insecureRedis);
  await refuseOpenRedis(redisUrl, allowOpen, log);
  const bindSecret = bindSecretOf(allowOpen, log);
  if (opts.migrate) {
    const applied = await migrateDeploy({ url: databaseUrl });
    log.info({ applied }, "migrations applied");
  }
  const server = await createApiServer({
    databaseUrl,
    redisUrl,
    redisPrefix: process.env.FLEETQ_REDIS_PREFIX || undefined,
    port: portOf(opts.port ?? process.env.FLEETQ_PORT, "--port/FLEETQ_PORT"),
    host: opts.host ?? (process.env.FLEETQ_HOST || undefined),
    schedulerConfig: schedulerConfigFromEnv(),
    rateLimits: rateLimitsFromEnv(),
    agentQueuePrefix: process.env.FLEETQ_BIND_QUEUE_PREFIX || undefined,
    bindSecret,
  });
  const life = new Lifecycle(log);
  life.add({ name: "api", stop: () => server.close() });
  log.info({ url: server.url, database: redact(databaseUrl) }, "api listening");
  await life.untilSignal();
  await flushLogger(log);
  // Stopped cleanly; a library\'s leftover timer must not keep the process alive.
  process.exit(0);
}
