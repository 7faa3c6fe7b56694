// What workers tell each other, over Redis pub/sub (`<prefix>workers:signals`): "ownership moved,
// look again" (a worker joined, left or gave clusters up), "run these clusters' cycles soon"
// (work found by a fleet-wide task, for clusters another worker owns) and "the digests of these
// clusters, please" (admission, to the clusters' owners). Fire-and-forget: the
// leases' renewal and the cycles' timers catch up with a signal lost.
import { Redis } from "ioredis";
import type { Logger } from "pino";

export type WorkerSignal =
  | { kind: "ownership"; from: string }
  | { kind: "cycles"; clusters: string[] | "all"; reason: string }
  /** Admission asks the owners of these clusters for their digests (owner-digests.ts). */
  | { kind: "digests"; clusters: string[]; known: Record<string, string>; reply: string; format?: number };

export class WorkerSignals {
  private readonly channel: string;
  private readonly sub: Redis;

  private constructor(
    private readonly pub: Redis,
    redisUrl: string,
    prefix: string,
    private readonly log: Logger,
  ) {
    this.channel = `${prefix}workers:signals`;
    this.sub = new Redis(redisUrl, { maxRetriesPerRequest: null, lazyConnect: true });
    this.sub.on("error", (err) => log.warn({ err: err.message }, "redis connection error (signals)"));
  }

  /** Subscribed before it returns: no signal sent after is missed. */
  static async open(
    pub: Redis,
    redisUrl: string,
    prefix: string,
    log: Logger,
    on: (s: WorkerSignal) => void,
  ): Promise<WorkerSignals> {
    const s = new WorkerSignals(pub, redisUrl, prefix, log);
    s.sub.on("message", (_channel, text: string) => {
      try {
        on(JSON.parse(text) as WorkerSignal);
      } catch (err) {
        log.warn({ err: (err as Error).message }, "ignored a signal that is not one");
      }
    });
    await s.sub.connect();
    await s.sub.subscribe(s.channel);
    return s;
  }

  async send(signal: WorkerSignal): Promise<void> {
    try {
      await this.pub.publish(this.channel, JSON.stringify(signal));
    } catch (err) {
      this.log.warn(
        { err: (err as Error).message, signal: signal.kind },
        "could not signal the other workers",
      );
    }
  }

  close(): void {
    this.sub.disconnect();
  }
}
