// An agent against the real API server (real PostgreSQL, real Redis), for the agent tests
// that go end to end: the admin makes a queue, registers cluster c1 and the agent's token,
// and the agent runs on the given backend. The test plays the workers' part: dispatch()
// moves the outbox onto the bind queue, cycle() runs one real scheduling cycle.
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import type { Logger } from "pino";
import { type RunningAgent, runAgent } from "../../src/agent/agent.js";
import type { ClusterBackend } from "../../src/agent/backends/types.js";
import { bindQueueName } from "../../src/protocol/bind-request.js";
import { StaleSnapshotError } from "../../src/store/errors.js";
import {
  bindRequestMessages,
  bindRequestsToDispatch,
  markBindRequestsDispatched,
} from "../../src/store/operations/dispatch.js";
import { gqlOk, registerClusterWithAgent, startTestApi, type TestApi } from "../helpers/api.js";
import { runCycle } from "../helpers/cycle.js";
import { TEST_REDIS_URL, deleteTestKeys, testRedisPrefix } from "../helpers/redis.js";
import { expect } from "vitest";
import { until } from "./until.js";
import { signed } from "./bind-requests.js";

export interface ApiAgent {
  api: TestApi;
  /** Key prefix of c1's bind queue (and of its agent's keys: `<prefix>-agent:c1:…`). */
  queuePrefix: string;
  agent: RunningAgent;
  /** Stops the agent and starts a new one on `backend` (a restarted agent process). */
  restart(backend: ClusterBackend): Promise<void>;
  admin<T>(query: string, variables?: Record<string, unknown>): Promise<T>;
  /** What the dispatch worker does: the outbox onto the cluster's bind queue; how many were sent. */
  dispatch(): Promise<number>;
  /** One scheduling cycle of c1; one whose snapshot went stale under the agent's reports runs again. */
  cycle(): ReturnType<typeof runCycle>;
  /** Waits until the API has `count` nodes of c1 (the agent's first report). */
  untilNodes(count: number): Promise<void>;
  close(): Promise<void>;
}

export async function startApiAgent(opts: {
  /** Names the test's Redis prefix. */
  label: string;
  /** The queue jobs are submitted to. */
  queue: string;
  backend: ClusterBackend;
  logger: Logger;
}): Promise<ApiAgent> {
  const queuePrefix = `${testRedisPrefix(opts.label)}bind`;
  const api = await startTestApi({ agentQueuePrefix: queuePrefix });
  const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  const queue = new Queue(bindQueueName("c1"), { connection: redis, prefix: queuePrefix });
  const admin = <T>(query: string, variables: Record<string, unknown> = {}) =>
    gqlOk<T>(api.url, api.adminToken, query, variables);
  // Pods in the default namespace, as these tests read them (a new queue's own would be fleetq-<queue>).
  await admin(
    `mutation($name: String!) { createQueue(input: { name: $name, namespaces: ["default"] }) { name } }`,
    {
      name: opts.queue,
    },
  );
  const agentToken = await registerClusterWithAgent(api);
  const start = (backend: ClusterBackend) =>
    runAgent({
      cluster: "c1",
      apiUrl: api.url,
      token: agentToken,
      redis: TEST_REDIS_URL,
      queuePrefix,
      backend,
      batchWindowMs: 10,
      heartbeatSeconds: 3600,
      logger: opts.logger,
    });
  let agent = await start(opts.backend);
  return {
    api,
    queuePrefix,
    get agent() {
      return agent;
    },
    async restart(backend) {
      await agent.stop();
      agent = await start(backend);
    },
    admin,
    async dispatch() {
      const ids = (await bindRequestsToDispatch(api.server.store, { cluster: "c1" })).map((r) => r.id);
      const messages = await bindRequestMessages(api.server.store, ids);
      await queue.addBulk(
        messages.map((data) => ({ name: data.kind, data: signed(data), opts: { jobId: data.id } })),
      );
      await markBindRequestsDispatched(api.server.store, ids);
      return messages.length;
    },
    async cycle() {
      for (;;) {
        try {
          return await runCycle(api.server.store, "c1");
        } catch (err) {
          if (!(err instanceof StaleSnapshotError)) throw err;
        }
      }
    },
    async untilNodes(count) {
      await until(async () => {
        const { cluster } = await admin<{ cluster: { nodes: unknown[] } }>(
          `{ cluster(name: "c1") { nodes { name } } }`,
        );
        expect(cluster.nodes).toHaveLength(count);
      });
    },
    async close() {
      await agent.stop();
      await queue.obliterate({ force: true });
      await queue.close();
      await deleteTestKeys(`${queuePrefix}-agent:`, redis);
      redis.disconnect();
      await api.close();
    },
  };
}
