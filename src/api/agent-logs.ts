// Pod logs through their cluster's agent (protocol/agent-requests.ts): the request goes onto the
// cluster's request list and the answer is read from its stream as the agent writes it. Each
// read holds a Redis connection of its own (its blocking reads hold it while they wait), at most
// MAX_READS at once per API process.
import { Redis } from "ioredis";
import {
  agentRequestKeys,
  entryOf,
  HEARTBEAT_TIMEOUT_MS,
  LIVE_RENEW_MS,
  LIVE_TTL_MS,
  type LogRequest,
  type ReplyEntry,
} from "../protocol/agent-requests.js";

/** Reads at once per API process (each holds a connection). */
export const MAX_READS = 100;
/** How long the agent has to start answering. */
export const FIRST_ANSWER_MS = 10_000;
/** How long a read that is not followed may take in all. */
const READ_DEADLINE_MS = 60_000;

/** Why an answer could not be had: the agent did not answer in time, or too many reads at once. */
export class AgentUnavailableError extends Error {
  override name = "AgentUnavailableError";
}

export class AgentLogs {
  private reads = 0;
  /** For everything but the blocking reads (which hold their own connection while they wait). */
  private commands: Redis | null = null;

  constructor(
    private readonly redisUrl: string,
    private readonly queuePrefix: string,
  ) {}

  async close(): Promise<void> {
    this.commands?.disconnect();
    this.commands = null;
  }

  private shared(): Redis {
    if (!this.commands) {
      this.commands = new Redis(this.redisUrl, { maxRetriesPerRequest: 1 });
      this.commands.on("error", () => {}); // a failed command rejects where it is awaited
    }
    return this.commands;
  }

  /** Sends the request to the cluster's agent and yields its answer's entries as they come,
   * ending with its last (an end or an error). `signal` ends the read at once, even while it
   * waits for the agent (its reader left): the blocking read's connection is closed. */
  async *answer(cluster: string, request: LogRequest, signal?: AbortSignal): AsyncGenerator<ReplyEntry> {
    if (this.reads >= MAX_READS)
      throw new AgentUnavailableError(`${MAX_READS} log reads are under way on this API server; try again`);
    this.reads++;
    const keys = agentRequestKeys(cluster, this.queuePrefix);
    const reply = keys.reply(request.id);
    const live = keys.live(request.id);
    const shared = this.shared();
    const redis = new Redis(this.redisUrl, { maxRetriesPerRequest: 1 });
    redis.on("error", () => {}); // a failed command rejects where it is awaited
    const leave = () => redis.disconnect();
    signal?.addEventListener("abort", leave, { once: true });
    const payload = JSON.stringify(request);
    let renew: NodeJS.Timeout | null = null;
    try {
      if (request.follow) {
        await shared.set(live, "1", "PX", LIVE_TTL_MS);
        renew = setInterval(() => void shared.pexpire(live, LIVE_TTL_MS).catch(() => {}), LIVE_RENEW_MS);
      }
      await shared.rpush(keys.requests, payload);
      const started = Date.now();
      let last = "0-0";
      let answered = false;
      for (;;) {
        const wait = !answered
          ? FIRST_ANSWER_MS
          : request.follow
            ? HEARTBEAT_TIMEOUT_MS
            : READ_DEADLINE_MS - (Date.now() - started);
        let read: [string, [string, string[]][]][] | null;
        try {
          read = (await redis.xread("BLOCK", Math.max(1, wait), "STREAMS", reply, last)) as typeof read;
        } catch (err) {
          if (signal?.aborted) return;
          throw err;
        }
        if (!read) {
          if (!answered) {
            await shared.lrem(keys.requests, 1, payload).catch(() => {});
            throw new AgentUnavailableError(
              `the agent of cluster ${cluster} did not answer within ${FIRST_ANSWER_MS / 1000}s`,
            );
          }
          throw new AgentUnavailableError(`the agent of cluster ${cluster} stopped answering`);
        }
        answered = true;
        for (const [id, fields] of read[0]?.[1] ?? []) {
          last = id;
          const entry = entryOf(fields);
          if (!entry || (entry.kind === "data" && !entry.text)) continue; // a heartbeat
          yield entry;
          if (entry.kind !== "data") return;
        }
      }
    } finally {
      signal?.removeEventListener("abort", leave);
      if (renew) clearInterval(renew);
      await shared.del(live, reply).catch(() => {});
      redis.disconnect();
      this.reads--;
    }
  }
}
