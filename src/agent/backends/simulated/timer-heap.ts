// A binary min-heap of deadlines: the simulated cluster's one timer for every running pod
// (100,000 pods must not mean 100,000 setTimeouts). Cancelling marks an entry dead; dead
// entries are skipped when they reach the top.

export interface TimerEntry<T> {
  at: number;
  value: T;
  cancelled: boolean;
}

export class TimerHeap<T> {
  private readonly heap: TimerEntry<T>[] = [];
  private live = 0;

  get size(): number {
    return this.live;
  }

  schedule(at: number, value: T): TimerEntry<T> {
    const entry: TimerEntry<T> = { at, value, cancelled: false };
    this.heap.push(entry);
    this.up(this.heap.length - 1);
    this.live++;
    return entry;
  }

  cancel(entry: TimerEntry<T>): void {
    if (entry.cancelled) return;
    entry.cancelled = true;
    this.live--;
  }

  /** The earliest live deadline, or null when nothing is scheduled. */
  nextAt(): number | null {
    this.dropCancelledTop();
    return this.heap[0]?.at ?? null;
  }

  /** Removes and returns every live entry due at or before `now`, earliest first. */
  popDue(now: number): T[] {
    const due: T[] = [];
    for (;;) {
      this.dropCancelledTop();
      const top = this.heap[0];
      if (!top || top.at > now) return due;
      this.pop();
      top.cancelled = true;
      this.live--;
      due.push(top.value);
    }
  }

  private dropCancelledTop(): void {
    while (this.heap[0]?.cancelled) this.pop();
  }

  private pop(): void {
    const last = this.heap.pop()!;
    if (this.heap.length > 0) {
      this.heap[0] = last;
      this.down(0);
    }
  }

  private up(i: number): void {
    const heap = this.heap;
    const entry = heap[i]!;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (heap[parent]!.at <= entry.at) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = entry;
  }

  private down(i: number): void {
    const heap = this.heap;
    const entry = heap[i]!;
    const n = heap.length;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && heap[child + 1]!.at < heap[child]!.at) child++;
      if (heap[child]!.at >= entry.at) break;
      heap[i] = heap[child]!;
      i = child;
    }
    heap[i] = entry;
  }
}
