// The path after the commit: N binds carried out by one simulated agent and reported to the real
// API (its own process). One scheduling cycle commits the N BindRequests (not measured), then
// the clock runs from their dispatch onto the cluster's queue until every request is closed
// SUCCEEDED and every pod is RUNNING in the database: binds/s through the agent and the API.
// Each run is on a fresh database; the figures are medians over --runs.
//
//   npm run bench:reports -- [--runs 3] [--binds 10000] [--agent-concurrency N] [--cpu-profile FILE]
//
// The agent runs as `fleetq agent` starts it (its backend's requests in flight, its log at its
// default level); --agent-concurrency N sets the requests in flight (a tuned run).
// --cpu-profile: this process's (the agent's) CPU profile over the measured window of the last run.
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import { Session } from "node:inspector/promises";
import os from "node:os";
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import { runAgent } from "../src/agent/agent.js";
import { parseClusterFile } from "../src/agent/backends/simulated/cluster-file.js";
import { SimulatedBackend } from "../src/agent/backends/simulated/simulated-backend.js";
import { defaultSchedulerConfig, runSession } from "../src/core/index.js";
import { commitSession, createStore, loadSnapshot, openDatabase, submitJob } from "../src/store/index.js";
import { prismaOf } from "../src/store/testing.js";
import { createTestDatabase } from "../test/helpers/db.js";
import { deleteTestKeys, TEST_REDIS_URL, testRedisPrefix } from "../test/helpers/redis.js";
import { BindDispatcher } from "../workers/dispatch/bind-dispatcher.js";
import {
  API_READY,
  agentConcurrency,
  agentLogger,
  cpuSeconds,
  createQueue,
  gql,
  httpAgent,
  ownCpuSeconds,
  startProcess,
} from "./processes.js";
import { median } from "./timing.js";

const { values: opt } = parseArgs({
  options: {
    runs: { type: "string", default: "3" },
    binds: { type: "string", default: "10000" },
    "agent-concurrency": { type: "string" },
    "cpu-profile": { type: "string" },
  },
});
const RUNS = Number(opt.runs);
const BINDS = Number(opt.binds);
const AGENT_CONCURRENCY = agentConcurrency(opt["agent-concurrency"]);
for (const [k, v] of Object.entries({ RUNS, BINDS }))
  if (!Number.isInteger(v) || v <= 0) throw new Error(`--${k.toLowerCase()} must be a positive integer`);

const PODS_PER_JOB = 8;
const CLUSTER = "sim";

interface RunResult {
  bindsPerSecond: number;
  seconds: number;
  /** Putting the N requests on the queue (BindDispatcher.send). */
  dispatchMs: number;
  /** CPU seconds per 1000 binds. */
  cpuPer1000: { api: number | null; agentAndBench: number };
}

async function oneRun(): Promise<RunResult> {
  const db = await createTestDatabase();
  const prefix = testRedisPrefix("fleetq-reports");
  const adminToken = `fq_bench_${randomBytes(16).toString("hex")}`;
  // The API hands the agent its key from this secret; the dispatch here signs with the same.
  const bindSecret = randomBytes(32).toString("hex");
  const api = await startProcess(
    ["serve"],
    {
      DATABASE_URL: db.url,
      REDIS_URL: TEST_REDIS_URL,
      FLEETQ_REDIS_PREFIX: prefix,
      FLEETQ_PORT: "0",
      FLEETQ_HOST: "127.0.0.1",
      FLEETQ_ADMIN_TOKEN: adminToken,
      FLEETQ_BIND_SECRET: bindSecret,
    },
    API_READY,
  );
  const database = await openDatabase(db.url);
  const prisma = prismaOf(database);
  const store = createStore(database);
  const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  const dispatcher = new BindDispatcher(store, redis, `${prefix}bind`, bindSecret);
  const url = api.match[1]!;
  const agent = await (async () => {
    await createQueue(url, adminToken);
    await gql(url, adminToken, `mutation { registerCluster(input: { name: "${CLUSTER}" }) { name } }`);
    const { createToken } = await gql<{ createToken: { secret: string } }>(
      url,
      adminToken,
      `mutation { createToken(input: { name: "agent", role: AGENT, cluster: "${CLUSTER}" }) { secret } }`,
    );
    const nodes = Math.ceil(BINDS / 8);
    return runAgent({
      cluster: CLUSTER,
      apiUrl: url,
      token: createToken.secret,
      redis: TEST_REDIS_URL,
      queuePrefix: `${prefix}bind`,
      backend: SimulatedBackend.fromClusterFile(
        parseClusterFile(
          `${CLUSTER}.yaml`,
          `nodeGroups:\n  - { name: gpu, count: ${nodes}, cpu: 128, memory: 1Ti, gpus: 8, gpuModel: H100 }\n`,
        ),
      ),
      register: false,
      ...(AGENT_CONCURRENCY ? { concurrency: AGENT_CONCURRENCY } : {}),
      heartbeatSeconds: 3600,
      logger: agentLogger(),
    });
  })();
  try {
    while ((await prisma.cluster.findUniqueOrThrow({ where: { name: CLUSTER } })).state !== "READY")
      await new Promise((r) => setTimeout(r, 100));
    const admin = { name: "bench" };
    for (let n = 0; n * PODS_PER_JOB < BINDS; n++) {
      await submitJob(store, admin, {
        name: `job-${n}`,
        queue: "bench",
        cluster: CLUSTER,
        tasks: [
          {
            name: "w",
            replicas: Math.min(PODS_PER_JOB, BINDS - n * PODS_PER_JOB),
            resources: { cpu: 1000, memory: "4Gi", gpu: 1 },
            durationSeconds: 86_400,
          },
        ],
      });
    }
    const { snapshot, generation, rows } = await loadSnapshot(store, CLUSTER);
    const commit = await commitSession(
      store,
      CLUSTER,
      generation,
      runSession(snapshot, defaultSchedulerConfig()),
      rows,
    );
    if (commit.bindRequests.length !== BINDS)
      throw new Error(`the cycle made ${commit.bindRequests.length} binds, not ${BINDS}`);

    const profiler = opt["cpu-profile"] ? new Session() : null;
    if (profiler) {
      profiler.connect();
      await profiler.post("Profiler.enable");
      await profiler.post("Profiler.start");
    }
    const cpuBefore = [cpuSeconds(api.proc.pid), ownCpuSeconds()];
    const start = performance.now();
    await dispatcher.send(commit.bindRequests, "cycle");
    const dispatchMs = performance.now() - start;
    for (;;) {
      const [done] = await prisma.$queryRaw<{ closed: number; running: number }[]>`
        SELECT (SELECT count(*)::int FROM bind_request WHERE state = 'SUCCEEDED') AS closed,
               (SELECT count(*)::int FROM pod WHERE state = 'RUNNING') AS running`;
      if (done!.closed === BINDS && done!.running === BINDS) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const seconds = (performance.now() - start) / 1000;
    const cpuAfter = [cpuSeconds(api.proc.pid), ownCpuSeconds()];
    if (profiler) {
      const { profile } = await profiler.post("Profiler.stop");
      fs.writeFileSync(opt["cpu-profile"]!, JSON.stringify(profile));
      profiler.disconnect();
    }
    const api1000 =
      cpuAfter[0] === null || cpuBefore[0] === null ? null : ((cpuAfter[0]! - cpuBefore[0]!) * 1000) / BINDS;
    return {
      bindsPerSecond: BINDS / seconds,
      seconds,
      dispatchMs,
      cpuPer1000: { api: api1000, agentAndBench: ((cpuAfter[1]! - cpuBefore[1]!) * 1000) / BINDS },
    };
  } finally {
    await agent.stop();
    await dispatcher.close();
    redis.disconnect();
    await database.close(); // its pool too: dropping the database would end its connections
    api.proc.kill("SIGKILL");
    await db.drop();
    await deleteTestKeys(prefix);
  }
}

const results: RunResult[] = [];
for (let run = 1; run <= RUNS; run++) {
  const r = await oneRun();
  results.push(r);
  console.log(
    `run ${run}: ${BINDS} binds carried out and reported in ${r.seconds.toFixed(2)} s: ${r.bindsPerSecond.toFixed(0)} binds/s ` +
      `(dispatch ${r.dispatchMs.toFixed(0)} ms, ${((r.dispatchMs * 1000) / BINDS).toFixed(0)} ms per 1000); ` +
      `CPU s per 1000 binds: api ${r.cpuPer1000.api?.toFixed(2) ?? "?"}, agent+bench ${r.cpuPer1000.agentAndBench.toFixed(2)}`,
  );
}
console.log(
  `median of ${RUNS}: ${median(results.map((r) => r.bindsPerSecond)).toFixed(0)} binds/s ` +
    `(${BINDS} binds, agent concurrency ${AGENT_CONCURRENCY ?? "default"}; load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")})`,
);
httpAgent.destroy();
