// A set that remembers only its most recent entries: bounded memory for "seen lately".

export class RecentSet {
  private readonly items = new Set<string>();

  constructor(private readonly capacity: number) {}

  has(item: string): boolean {
    return this.items.has(item);
  }

  add(item: string): void {
    this.items.delete(item);
    this.items.add(item);
    if (this.items.size > this.capacity) {
      // Sets iterate in insertion order: the first is the oldest.
      const oldest = this.items.values().next().value;
      if (oldest !== undefined) this.items.delete(oldest);
    }
  }
}
