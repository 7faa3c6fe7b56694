// One kind of report waiting for the API (bind results, pod states, pod groups): kept in
// order until the API has acknowledged it, sent in batches. A batch the API rejects for
// one bad item is retried item by item so one bad item cannot block the rest.
import { ApiRejectedError } from "./graphql-client.js";

/** Rejections that concern the items sent, not the agent: retrying them cannot succeed. */
const ITEM_REJECTIONS = new Set(["BAD_USER_INPUT", "NOT_FOUND", "CONFLICT"]);

export function isItemRejection(err: unknown): err is ApiRejectedError {
  return err instanceof ApiRejectedError && err.code !== undefined && ITEM_REJECTIONS.has(err.code);
}

export class AgentStoppedError extends Error {
  override name = "AgentStoppedError";
}

interface Entry<T> {
  item: T;
  key?: string;
  settle?: { resolve(): void; reject(err: Error): void };
}

export class ReportLane<T> {
  private entries: Entry<T>[] = [];
  private readonly waiting = new Map<string, Promise<void>>();

  constructor(
    readonly name: string,
    private readonly send: (items: T[]) => Promise<unknown>,
    private readonly maxBatch: number,
    private readonly onDropped: (item: T, err: ApiRejectedError) => void,
  ) {}

  get size(): number {
    return this.entries.length;
  }

  push(item: T): void {
    this.entries.push({ item });
  }

  /** Resolves once the API acknowledged the item (or refused that very item for good).
   * An item whose key is already queued shares that entry instead of being sent twice. */
  pushAndWait(item: T, key: string): Promise<void> {
    const queued = this.waiting.get(key);
    if (queued) return queued;
    const acked = new Promise<void>((resolve, reject) =>
      this.entries.push({ item, key, settle: { resolve, reject } }),
    );
    this.waiting.set(key, acked);
    return acked;
  }

  /** Sends everything queued. Throws (leaving the unsent items queued) when the API is
   * unavailable or refuses the agent as a whole; the caller backs off and calls again. */
  async flush(): Promise<void> {
    while (this.entries.length > 0) {
      const batch = this.entries.slice(0, this.maxBatch);
      try {
        await this.send(batch.map((entry) => entry.item));
        this.settle(batch.length);
      } catch (err) {
        if (!isItemRejection(err)) throw err;
        if (batch.length === 1) this.drop(err);
        else await this.flushOneByOne(batch.length);
      }
    }
  }

  /** Fails every waiter: the agent is stopping and the items will be re-delivered. */
  abandon(): void {
    for (const entry of this.entries)
      entry.settle?.reject(new AgentStoppedError(`${this.name}: agent stopped`));
    this.entries = [];
  }

  private async flushOneByOne(count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      const first = this.entries[0]!;
      try {
        await this.send([first.item]);
        this.settle(1);
      } catch (err) {
        if (!isItemRejection(err)) throw err;
        this.drop(err);
      }
    }
  }

  private drop(err: ApiRejectedError): void {
    const [entry] = this.entries.splice(0, 1);
    if (!entry) return;
    this.onDropped(entry.item, err);
    this.done(entry);
  }

  private settle(count: number): void {
    for (const entry of this.entries.splice(0, count)) this.done(entry);
  }

  private done(entry: Entry<T>): void {
    if (entry.key !== undefined) this.waiting.delete(entry.key);
    entry.settle?.resolve();
  }
}
