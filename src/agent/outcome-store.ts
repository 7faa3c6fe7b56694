// Remembers, in Redis, the result of every request this cluster's agents executed, keyed
// by the request id. A request delivered again (a restart re-delivers claimed jobs; a
// producer may re-send) is answered from here instead of being carried out a second
// time, even when the cluster state it changed has moved on (e.g. the pod was evicted
// since). Kept for a week: far longer than any request stays in flight.
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { backoffDelay, sleep } from "./backoff.js";
import type { BindResultReport } from "./control-plane.js";
import { AgentStoppedError } from "./report-lane.js";

const TTL_SECONDS = 7 * 24 * 3600;

export class OutcomeStore {
  constructor(
    private readonly redis: Redis,
    /** e.g. "bind-agent:<cluster>": outside BullMQ's own key space. */
    private readonly keyPrefix: string,
    private readonly log: Logger,
  ) {}

  /** The recorded outcome, or null when the request was never executed. Retries while
   * Redis is away: failing here could mark the request failed and lose it. */
  async get(requestId: string, signal: AbortSignal): Promise<BindResultReport | null> {
    const stored = await this.retry("read", signal, () => this.redis.get(this.key(requestId)));
    return stored ? (JSON.parse(stored) as BindResultReport) : null;
  }

  /** Retries until Redis takes it: giving up would let a redelivery execute the request again. */
  async put(result: BindResultReport, signal: AbortSignal): Promise<void> {
    await this.retry("record", signal, () =>
      this.redis.set(this.key(result.bindRequest), JSON.stringify(result), "EX", TTL_SECONDS),
    );
  }

  private async retry<T>(what: string, signal: AbortSignal, call: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await call();
      } catch (err) {
        if (signal.aborted) throw new AgentStoppedError(`cannot ${what} a request's outcome: agent stopped`);
        this.log.warn(
          { err: (err as Error).message },
          `cannot ${what} a request's outcome in Redis; retrying`,
        );
        await sleep(backoffDelay(attempt), signal);
      }
    }
  }

  private key(requestId: string): string {
    return `${this.keyPrefix}:outcome:${requestId}`;
  }
}
