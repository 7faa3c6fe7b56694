// A binary heap with the exact sift rules of Go's container/heap, so that items the
// order considers equal come out in the same sequence as in KAI.

export class Heap<T> {
  private readonly items: T[] = [];

  /** `less(a, b)`: a comes out before b. `capacity` (≥ 0) drops the item at that index on overflow, as KAI does. */
  constructor(
    private readonly less: (a: T, b: T) => boolean,
    private readonly capacity = -1,
  ) {}

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(x: T): void {
    this.items.push(x);
    this.up(this.items.length - 1);
    if (this.capacity >= 0 && this.items.length > this.capacity) this.removeAt(this.capacity);
  }

  pop(): T | undefined {
    const n = this.items.length - 1;
    if (n < 0) return undefined;
    this.swap(0, n);
    this.down(0, n);
    return this.items.pop();
  }

  /** Put `x` at the top in place of the top item, which is returned (the caller knows `x` goes first). */
  replaceTop(x: T): T | undefined {
    const top = this.items[0];
    this.items[0] = x;
    return top;
  }

  /** Add `xs` and re-establish the order in linear time (Go: heap.Init). */
  addAll(xs: readonly T[]): void {
    for (const x of xs) this.items.push(x);
    const n = this.items.length;
    for (let i = (n >> 1) - 1; i >= 0; i--) this.down(i, n);
  }

  /** Re-establish the order after the item at `i` changed (Go: heap.Fix). */
  fix(i: number): void {
    if (!this.down(i, this.items.length)) this.up(i);
  }

  removeAt(i: number): T | undefined {
    const n = this.items.length - 1;
    if (n !== i) {
      this.swap(i, n);
      if (!this.down(i, n)) this.up(i);
    }
    return this.items.pop();
  }

  /** A heap holding `map` of each item in the same places, ordered by `less` (which must agree with this order). */
  mapped<U>(map: (x: T) => U, less: (a: U, b: U) => boolean): Heap<U> {
    const h = new Heap<U>(less, this.capacity);
    for (const x of this.items) h.items.push(map(x));
    return h;
  }

  toArray(): T[] {
    return [...this.items];
  }

  private swap(i: number, j: number): void {
    const a = this.items;
    const t = a[i]!;
    a[i] = a[j]!;
    a[j] = t;
  }

  private up(j: number): void {
    const a = this.items;
    for (;;) {
      const i = (j - 1) >> 1;
      if (i === j || i < 0 || !this.less(a[j]!, a[i]!)) break;
      this.swap(i, j);
      j = i;
    }
  }

  private down(i0: number, n: number): boolean {
    const a = this.items;
    let i = i0;
    for (;;) {
      const j1 = 2 * i + 1;
      if (j1 >= n || j1 < 0) break;
      let j = j1;
      const j2 = j1 + 1;
      if (j2 < n && this.less(a[j2]!, a[j1]!)) j = j2;
      if (!this.less(a[j]!, a[i]!)) break;
      this.swap(i, j);
      i = j;
    }
    return i > i0;
  }
}
