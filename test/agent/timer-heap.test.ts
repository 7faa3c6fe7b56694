import { describe, expect, it } from "vitest";
import { TimerHeap } from "../../src/agent/backends/simulated/timer-heap.js";

describe("TimerHeap", () => {
  it("pops due entries earliest first and skips cancelled ones", () => {
    const heap = new TimerHeap<string>();
    const deadlines = [50, 10, 40, 10, 30, 20, 60];
    const entries = deadlines.map((at, i) => heap.schedule(at, `t${i}@${at}`));
    heap.cancel(entries[2]!); // t2@40
    heap.cancel(entries[2]!); // twice is harmless
    expect(heap.size).toBe(6);
    expect(heap.nextAt()).toBe(10);
    expect(heap.popDue(35).sort()).toEqual(["t1@10", "t3@10", "t4@30", "t5@20"].sort());
    expect(heap.nextAt()).toBe(50);
    expect(heap.popDue(100)).toEqual(["t0@50", "t6@60"]);
    expect(heap.size).toBe(0);
    expect(heap.nextAt()).toBeNull();
  });

  it("orders many random deadlines", () => {
    const heap = new TimerHeap<number>();
    const values = Array.from({ length: 5_000 }, (_, i) => (i * 7919) % 10_007);
    for (const v of values) heap.schedule(v, v);
    const popped = heap.popDue(Number.POSITIVE_INFINITY);
    expect(popped).toEqual([...values].sort((a, b) => a - b));
  });
});
