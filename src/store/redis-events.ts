// Events across processes: operations publish committed events on one Redis channel; each API
// replica holds one subscriber connection and fans the events out to its local listeners
// (GraphQL subscriptions). Pub/sub is fire-and-forget: the event log table stays the record.
import { Redis } from "ioredis";
import type { EventSink, StoreEvent } from "./events.js";

export type EventListener = (event: StoreEvent) => void;

export class RedisEventBus implements EventSink {
  private readonly publisher: Redis;
  private subscriber: Redis | null = null;
  private subscribing: Promise<void> | null = null;
  private readonly listeners = new Set<EventListener>();
  private pending: StoreEvent[] = [];
  private flushing: Promise<void> | null = null;
  readonly channel: string;

  /** prefix: namespaces the channel (deployments sharing a Redis, concurrent test runs). */
  constructor(
    private readonly redisUrl: string,
    prefix = "fleetq:",
  ) {
    this.channel = `${prefix}events`;
    // One retry: while Redis is away a publish fails after one reconnection attempt (and is
    // logged) instead of holding up the operation that committed; the event table keeps the record.
    this.publisher = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
    this.publisher.on("error", () => {}); // reconnects by itself; publish() reports failures
  }

  /** Events published in the same turn of the event loop go out as one Redis message. */
  publish(events: readonly StoreEvent[]): Promise<void> {
    if (!events.length) return Promise.resolve();
    this.pending.push(...events);
    this.flushing ??= new Promise<void>((resolve) => {
      setImmediate(() => {
        const batch = this.pending;
        this.pending = [];
        this.flushing = null;
        this.publisher.publish(this.channel, JSON.stringify(batch)).then(
          () => resolve(),
          (e: Error) => {
            console.error(`fleetq: could not publish ${batch.length} event(s): ${e.message}`);
            resolve();
          },
        );
      });
    });
    return this.flushing;
  }

  /** Adds a listener; resolves once this process is subscribed. Returns the unsubscribe function. */
  async listen(listener: EventListener): Promise<() => void> {
    this.listeners.add(listener);
    await this.ensureSubscribed();
    return () => this.listeners.delete(listener);
  }

  private ensureSubscribed(): Promise<void> {
    this.subscribing ??= (async () => {
      const sub = new Redis(this.redisUrl, { maxRetriesPerRequest: null });
      this.subscriber = sub; // kept at once: close() must stop it even while it is still connecting
      sub.on("error", () => {});
      sub.on("message", (_channel: string, payload: string) => {
        let events: StoreEvent[];
        try {
          events = JSON.parse(payload) as StoreEvent[];
        } catch {
          return;
        }
        for (const e of events) for (const l of this.listeners) l(e);
      });
      await sub.subscribe(this.channel);
    })();
    return this.subscribing;
  }

  /** Reachable within `timeoutMs` (readiness probes must answer quickly, not wait for retries). */
  async ping(timeoutMs = 1000): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    try {
      return await Promise.race([
        this.publisher.ping().then(
          (r) => r === "PONG",
          () => false,
        ),
        timeout,
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    this.listeners.clear();
    // disconnect(), not quit(): quit waits for a reply that never comes when Redis is away.
    this.subscriber?.disconnect();
    this.publisher.disconnect();
  }
}
