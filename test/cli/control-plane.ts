// A control plane for the CLI tests, in this process: the real API server on a fresh database
// (test/helpers: createTestDatabase, a unique Redis prefix), the real workers, and one simulated
// cluster with its real agent. Queues org → team-a, team-b; a MEMBER token for team-a.
import { pino } from "pino";
import { type RunningAgent, runAgent } from "../../src/agent/agent.js";
import { parseClusterFile } from "../../src/agent/backends/simulated/cluster-file.js";
import { SimulatedBackend } from "../../src/agent/backends/simulated/simulated-backend.js";
import { metrics as workerMetrics, type RunningWorkers, startWorkers } from "../../workers/index.js";
import { createApiServer, type ApiServer } from "../../src/api/server.js";
import { gqlOk } from "../helpers/api.js";
import { createTestDatabase, type TestDatabase } from "../helpers/db.js";
import { TEST_REDIS_URL, deleteTestKeys, testRedisPrefix } from "../helpers/redis.js";

const silent = pino({ level: "silent" });

export const CLUSTER_YAML = `
name: sim
labels: { tier: test }
defaultPodDurationSeconds: 2
nodeGroups:
  - name: gpu
    count: 2
    cpu: 32
    memory: 256Gi
    gpus: 8
    gpuModel: NVIDIA-A100-SXM4-80GB
    gpuMemoryMiB: 81920
`;

export interface CliControlPlane {
  url: string;
  baseUrl: string;
  admin: string;
  member: string;
  db: TestDatabase;
  server: ApiServer;
  gql<T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>): Promise<T>;
  close(): Promise<void>;
}

export async function startCliControlPlane(): Promise<CliControlPlane> {
  const db = await createTestDatabase();
  const prefix = testRedisPrefix("fleetq-cli-test");
  const admin = `fq_cli_test_admin_${Math.random().toString(36).slice(2)}`;
  const bindQueuePrefix = `${prefix}bind`;
  const server = await createApiServer({
    databaseUrl: db.url,
    redisUrl: TEST_REDIS_URL,
    redisPrefix: prefix,
    agentQueuePrefix: bindQueuePrefix,
    port: 0,
    host: "127.0.0.1",
    adminToken: admin,
    metricsRegistries: [workerMetrics],
  });
  const gql = <T = Record<string, unknown>>(query: string, variables: Record<string, unknown> = {}) =>
    gqlOk<T>(server.url, admin, query, variables);
  const mutate = (m: string, input: Record<string, unknown>) => gql(m, { input });
  for (const q of [{ name: "org" }, { name: "team-a", parent: "org" }, { name: "team-b", parent: "org" }]) {
    await mutate("mutation($input: CreateQueueInput!) { createQueue(input: $input) { name } }", q);
  }
  for (const queue of ["org", "team-a", "team-b"]) {
    for (const [resource, deserved] of [
      ["GPU", 8],
      ["CPU", 32_000],
      ["MEMORY", 256 * 2 ** 30],
    ] as const) {
      await mutate("mutation($input: SetQueueQuotaInput!) { setQueueQuota(input: $input) { name } }", {
        queue,
        resource,
        deserved: queue === "org" ? deserved * 2 : deserved,
      });
    }
  }
  await mutate("mutation($input: RegisterClusterInput!) { registerCluster(input: $input) { name } }", {
    name: "sim",
    labels: [{ key: "tier", value: "test" }],
  });
  const token = async (input: Record<string, unknown>) =>
    (
      await gql<{ createToken: { secret: string } }>(
        "mutation($input: CreateTokenInput!) { createToken(input: $input) { secret } }",
        { input },
      )
    ).createToken.secret;
  const member = await token({ name: "team-a-ci", role: "MEMBER", queues: ["team-a"] });
  const agentToken = await token({ name: "agent-sim", role: "AGENT", cluster: "sim" });

  let workers: RunningWorkers | null = null;
  let agent: RunningAgent | null = null;
  try {
    agent = await runAgent({
      cluster: "sim",
      apiUrl: server.url,
      token: agentToken,
      redis: TEST_REDIS_URL,
      queuePrefix: bindQueuePrefix,
      backend: SimulatedBackend.fromClusterFile(parseClusterFile("sim.yaml", CLUSTER_YAML)),
      register: false,
      batchWindowMs: 20,
      logger: silent,
    });
    workers = await startWorkers({
      databaseUrl: db.url,
      redisUrl: TEST_REDIS_URL,
      prefix,
      bindQueuePrefix,
      cycleIntervalMs: 300,
      admissionIntervalMs: 300,
      sweepIntervalMs: 500,
      pendingDispatchGraceMs: 500,
      lockDurationMs: 5000,
      stalledIntervalMs: 1000,
      logger: silent,
    });
  } catch (e) {
    await agent?.stop();
    await server.close();
    await db.drop();
    throw e;
  }
  return {
    url: server.url,
    baseUrl: server.url.replace(/\/graphql$/, ""),
    admin,
    member,
    db,
    server,
    gql,
    close: async () => {
      await workers?.stop();
      await agent?.stop();
      await server.close();
      await db.drop();
      await deleteTestKeys(prefix);
    },
  };
}
