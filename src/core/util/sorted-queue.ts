// A priority queue for items whose order cannot change while they wait: the first fill is
// sorted once and taken with a cursor, and items pushed after it wait in a heap beside it.
// For a strict total order (no two items equal) it yields exactly what a heap of the same
// items would, whatever the heap's layout; an order with ties, or items whose order keys move
// while queued, need the heap itself.
import { Heap } from "./heap.js";

export class SortedQueue<T> {
  /** The first fill: unsorted until settle(), then in order from `next` on. */
  private items: T[] = [];
  private next = 0;
  private settled = true;
  /** While unsorted: the index of the first in order of the items before `scanned`. */
  private best = -1;
  private scanned = 0;
  /** Items pushed after the first fill. */
  private later: Heap<T>;

  /** `compare(a, b)` < 0: a comes out before b. */
  constructor(private readonly compare: (a: T, b: T) => number) {
    this.later = new Heap<T>((a, b) => compare(a, b) < 0);
  }

  get size(): number {
    return this.items.length - this.next + this.later.size;
  }

  /**
   * Add to the first fill, before anything is taken (sorted at settle(); only its first item in
   * order is read meanwhile).
   */
  add(x: T): void {
    if (this.next > 0 || this.later.size > 0) throw new Error("SortedQueue.add after the first fill");
    this.items.push(x);
    this.settled = false;
  }

  /** Sort the first fill. */
  settle(): void {
    if (this.settled) return;
    this.items.sort(this.compare);
    this.best = -1;
    this.scanned = 0;
    this.settled = true;
  }

  peek(): T | undefined {
    if (!this.settled) {
      // The items added since the last look are compared then (none when nobody looks).
      const a = this.items;
      for (; this.scanned < a.length; this.scanned++)
        if (this.best < 0 || this.compare(a[this.scanned]!, a[this.best]!) < 0) this.best = this.scanned;
      return a[this.best];
    }
    const b = this.later.peek();
    if (this.next >= this.items.length) return b;
    const a = this.items[this.next]!;
    return b !== undefined && this.compare(b, a) < 0 ? b : a;
  }

  pop(): T | undefined {
    this.settle();
    const b = this.later.peek();
    if (this.next >= this.items.length) return this.later.pop();
    const a = this.items[this.next]!;
    if (b !== undefined && this.compare(b, a) < 0) return this.later.pop();
    this.next++;
    if (this.next === this.items.length) {
      this.items = [];
      this.next = 0;
    }
    return a;
  }

  push(x: T): void {
    this.settle();
    this.later.push(x);
  }

  /** The items still queued, in no particular order. */
  toArray(): T[] {
    return [...this.items.slice(this.next), ...this.later.toArray()];
  }

  /** An independent copy in the same state, ordered by `compare` (which must agree with this order). */
  copy(compare: (a: T, b: T) => number = this.compare): SortedQueue<T> {
    const c = new SortedQueue<T>(compare);
    c.items = this.items.slice(this.next);
    c.settled = this.settled;
    c.best = this.best;
    c.scanned = this.scanned;
    c.later = this.later.mapped(
      (x) => x,
      (a, b) => compare(a, b) < 0,
    );
    return c;
  }
}
