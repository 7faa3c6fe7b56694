// `fleetq dev`: the whole control plane in one process — database (PostgreSQL or embedded
// PGlite, migrated), Redis (found or started), the API server, the workers and one simulated
// agent per demo cluster — plus the demo's queues, quotas and tokens, created once.
import { join } from "node:path";
import type { Logger } from "pino";
import { type RunningAgent, loadClusterFile, runAgent } from "../../agent/index.js";
import { createApiServer } from "../../api/server.js";
import { createStore, migrateDeploy, openDatabase } from "../../store/index.js";
import { metrics as workerMetrics, startWorkers } from "../../../workers/index.js";
import { ApiClient } from "../client/api-client.js";
import { DEMO_CLUSTER_FILES } from "../demo/demo-plan.js";
import { type DemoTokens, seedDemo } from "../demo/seed-demo.js";
import { TokenFiles } from "../demo/token-files.js";
import { CliError } from "../exit-codes.js";
import { Lifecycle } from "../lifecycle.js";
import { exampleClusterFile } from "../paths.js";
import { workerOptionsFromEnv } from "../worker-options.js";
import { rateLimitsFromEnv } from "../api-options.js";
import { devAdminToken } from "./admin-token.js";
import { type LocalRedis, localRedis } from "./local-redis.js";
import { lockStateDir, stateDir } from "./state-dir.js";
import { redactUrl } from "../redact.js";

export interface DevOptions {
  port?: number;
  host?: string;
  env: NodeJS.ProcessEnv;
  log: Logger;
  /** True once Ctrl-C was pressed during startup: stop what started, start nothing more. */
  interrupted?: () => boolean;
}

/** Ctrl-C during startup. */
export class StartInterrupted extends Error {
  override name = "StartInterrupted";
}

export interface DemoClusterInfo {
  name: string;
  file: string;
  nodes: number;
  gpus: number;
}

export interface RunningDev {
  /** http://localhost:<port> */
  baseUrl: string;
  port: number;
  stateDir: string;
  databaseUrl: string;
  redis: LocalRedis;
  adminToken: string;
  tokens: DemoTokens;
  clusters: DemoClusterInfo[];
  lifecycle: Lifecycle;
}

export async function startDev(o: DevOptions): Promise<RunningDev> {
  const { env, log } = o;
  const life = new Lifecycle(log);
  const checkpoint = () => {
    if (o.interrupted?.()) throw new StartInterrupted("interrupted while starting");
  };
  try {
    const dir = stateDir(env);
    const release = lockStateDir(dir);
    life.add({ name: "state folder lock", stop: async () => release() });

    const databaseUrl = env.DATABASE_URL || `pglite:${join(dir, "pglite")}`;
    const applied = await migrateDeploy({ url: databaseUrl });
    if (applied.length) log.info({ applied }, "migrations applied");
    checkpoint();
    const redis = await localRedis({ env, stateDir: dir });
    life.add({ name: `redis (${redis.source})`, stop: () => redis.stop() });
    checkpoint();
    log.info({ redis: redactUrl(redis.url), source: redis.source }, "redis");

    // One database handle for the API and the workers: the embedded database is one connection.
    const db = await openDatabase(databaseUrl);
    life.add({ name: "database", stop: () => db.close() });
    const files = new TokenFiles(join(dir, "tokens"));
    const adminToken = await devAdminToken(createStore(db), files, env);

    const prefix = env.FLEETQ_REDIS_PREFIX || undefined;
    const workerOptions = workerOptionsFromEnv(
      { databaseUrl, redisUrl: redis.url, logger: log.child({ part: "workers" }) },
      env,
    );
    const port = o.port ?? 4000;
    const queuePrefix = env.FLEETQ_BIND_QUEUE_PREFIX || undefined;
    const api = await createApiServer({
      store: createStore(db),
      redisUrl: redis.url,
      redisPrefix: prefix,
      port,
      host: o.host,
      schedulerConfig: workerOptions.schedulerConfig,
      metricsRegistries: [workerMetrics],
      rateLimits: rateLimitsFromEnv(env),
      agentQueuePrefix: queuePrefix,
    }).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== "EADDRINUSE") throw e;
      throw new CliError(
        `port ${port} is in use (another fleetq?): stop it, or pick another port with FLEETQ_PORT or --port`,
      );
    });
    life.add({ name: "api", stop: () => api.close() });
    checkpoint();
    const apiUrl = `http://127.0.0.1:${api.port}/graphql`;

    const clusterFiles = await Promise.all(
      DEMO_CLUSTER_FILES.map(async (f) => {
        const file = exampleClusterFile(f);
        const parsed = await loadClusterFile(file);
        return { file, parsed, name: parsed.name ?? f.replace(/\.ya?ml$/, "") };
      }),
    );
    const seeded = await seedDemo(
      new ApiClient({ url: apiUrl, token: adminToken }),
      clusterFiles.map((c) => ({ name: c.name, labels: c.parsed.labels })),
      files,
    );
    if (seeded.createdQueues.length || seeded.registeredClusters.length || seeded.createdTokens.length) {
      const { createdQueues: queues, registeredClusters: clusters, createdTokens: tokens } = seeded;
      log.info({ queues, clusters, tokens }, "demo created");
    }

    const workers = await startWorkers({ ...workerOptions, store: api.store });
    life.add({ name: "workers", stop: () => workers.stop() });
    checkpoint();

    for (const c of clusterFiles) {
      const agent: RunningAgent = await runAgent({
        cluster: c.name,
        apiUrl,
        token: seeded.tokens.agents[c.name]!,
        redis: redis.url,
        queuePrefix,
        backend: { kind: "simulated", clusterFile: c.file },
        logger: log.child({ part: "agent" }),
      });
      life.add({ name: `agent ${c.name}`, stop: () => agent.stop() });
      checkpoint();
    }

    return {
      baseUrl: `http://localhost:${api.port}`,
      port: api.port,
      stateDir: dir,
      databaseUrl,
      redis,
      adminToken,
      tokens: seeded.tokens,
      clusters: clusterFiles.map((c) => ({
        name: c.name,
        file: c.file,
        nodes: c.parsed.nodeGroups.reduce((n, g) => n + g.count, 0),
        gpus: c.parsed.nodeGroups.reduce((n, g) => n + g.count * g.gpus, 0),
      })),
      lifecycle: life,
    };
  } catch (e) {
    await life.stop();
    throw e;
  }
}
