// What an agent test needs around the agent: the recorded GraphQL API, a BullMQ producer
// on the cluster's bind queue under a unique Redis prefix, and cleanup of those keys.
import { randomUUID } from "node:crypto";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import type { BindRequestMessage } from "../../src/protocol/bind-request.js";
import { bindQueueName } from "../../src/protocol/bind-request.js";
import { TEST_REDIS_URL, deleteTestKeys, testRedisPrefix } from "../helpers/redis.js";
import { GraphQLRecorder } from "./graphql-recorder.js";
import { signed } from "./bind-requests.js";

export const AGENT_TOKEN = "agent-token-c1";

export class AgentHarness {
  readonly redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  /** Key prefix of the bind queues for this test only. */
  readonly queuePrefix = `${testRedisPrefix("fleetq-agent-test")}bind`;
  readonly queue: Queue;

  private constructor(
    readonly cluster: string,
    readonly api: GraphQLRecorder,
  ) {
    this.queue = new Queue(bindQueueName(cluster), { connection: this.redis, prefix: this.queuePrefix });
  }

  static async start(cluster = "c1"): Promise<AgentHarness> {
    return new AgentHarness(cluster, await GraphQLRecorder.start(AGENT_TOKEN, cluster));
  }

  /** Puts requests on the queue as the dispatcher does: signed with the cluster's key, the
   * request id is the job id. */
  async send(...requests: BindRequestMessage[]): Promise<void> {
    await this.queue.addBulk(
      requests.map((data) => ({
        name: data.kind,
        data: signed(data, this.cluster),
        opts: { jobId: data.id },
      })),
    );
  }

  async counts(): Promise<{ active: number; completed: number; failed: number; waiting: number }> {
    const counts = await this.queue.getJobCounts("active", "completed", "failed", "waiting");
    return {
      active: counts.active ?? 0,
      completed: counts.completed ?? 0,
      failed: counts.failed ?? 0,
      waiting: counts.waiting ?? 0,
    };
  }

  async stop(): Promise<void> {
    await this.queue.close();
    // Everything this test wrote lives under its prefix (queue and outcome keys).
    await deleteTestKeys(this.queuePrefix.slice(0, this.queuePrefix.lastIndexOf(":") + 1), this.redis);
    this.redis.disconnect();
    await this.api.stop();
  }
}

export function uuid(): string {
  return randomUUID();
}
