// Per-request batching of lookups by key (jobs lists ask each job for its queue, pods, events):
// every load() of one tick becomes one query. A small DataLoader, cached for the request.

export class BatchLoader<K, V> {
  private readonly cache = new Map<K, Promise<V>>();
  private queue: { key: K; resolve: (v: V) => void; reject: (e: unknown) => void }[] = [];

  constructor(
    private readonly fetch: (keys: K[]) => Promise<Map<K, V>>,
    private readonly missing: V,
  ) {}

  load(key: K): Promise<V> {
    let p = this.cache.get(key);
    if (!p) {
      p = new Promise<V>((resolve, reject) => {
        // After the promise jobs of this tick (how DataLoader schedules): every resolver of a
        // list's items has asked by then.
        if (!this.queue.length) void Promise.resolve().then(() => process.nextTick(() => void this.flush()));
        this.queue.push({ key, resolve, reject });
      });
      this.cache.set(key, p);
    }
    return p;
  }

  /** Forget a key (after a mutation changed it). */
  clear(key: K): void {
    this.cache.delete(key);
  }

  private async flush(): Promise<void> {
    const batch = this.queue;
    this.queue = [];
    try {
      const found = await this.fetch([...new Set(batch.map((b) => b.key))]);
      for (const b of batch) b.resolve(found.has(b.key) ? found.get(b.key)! : this.missing);
    } catch (e) {
      for (const b of batch) b.reject(e);
    }
  }
}
