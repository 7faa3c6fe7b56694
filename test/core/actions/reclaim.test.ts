import { describe, expect, it } from "vitest";
import { contended, gpuNode, job, pending, queue, run, running, snapshot } from "./snapshots.js";

describe("reclaim", () => {
  it("takes back GPUs from a queue over its fair share, youngest victims first", () => {
    const r = run(contended(), ["reclaim"]);
    expect(r.evictions).toEqual(["a2-0", "a3-0"]);
    expect(r.pipelines).toEqual(["b0-0@n1", "b0-1@n1"]);
    expect(r.binds).toEqual([]);
  });

  it("does nothing for a queue already at its fair share", () => {
    const s = snapshot(
      [gpuNode("n1", 4)],
      [queue("a", 0, { deserved: 2 }), queue("b", 1, { deserved: 2 })],
      [
        job("a0", "a", [running("n1"), running("n1")], { ageMinutes: 40 }),
        job("b0", "b", [running("n1"), running("n1")], { ageMinutes: 30 }),
        job("b1", "b", [pending()], { ageMinutes: 5 }),
      ],
    );
    const r = run(s, ["reclaim"]);
    expect(r.evictions).toEqual([]);
    expect(r.pipelines).toEqual([]);
  });

  it("never takes a queue below its deserved quota", () => {
    const s = snapshot(
      [gpuNode("n1", 4)],
      [queue("a", 0, { deserved: 3 }), queue("b", 1, { deserved: 1 })],
      [
        job("a0", "a", [running("n1")], { ageMinutes: 40 }),
        job("a1", "a", [running("n1")], { ageMinutes: 30 }),
        job("a2", "a", [running("n1")], { ageMinutes: 20 }),
        job("a3", "a", [running("n1")], { ageMinutes: 10 }),
        job("b0", "b", [pending()], { ageMinutes: 5 }),
        job("b1", "b", [pending()], { ageMinutes: 4 }),
      ],
    );
    const r = run(s, ["reclaim"]);
    // b deserves 1 GPU: one victim for b0; b1 would take b over its share, a keeps its 3.
    expect(r.evictions).toEqual(["a3-0"]);
    expect(r.pipelines).toEqual(["b0-0@n1"]);
  });

  it("moves a victim that fits elsewhere instead of taking it", () => {
    const s = snapshot(
      [gpuNode("n1", 2), gpuNode("n2", 1)],
      [queue("a", 0, { deserved: 0 }), queue("b", 1, { deserved: 2 })],
      [job("a0", "a", [running("n1")], { ageMinutes: 40 }), job("b0", "b", [pending(2)], { ageMinutes: 5 })],
    );
    const r = run(s, ["reclaim"]);
    expect(r.evictions).toEqual(["a0-0"]);
    expect(r.pipelines).toEqual(["a0-0@n2", "b0-0@n1"]);
  });

  it("takes only the extra pods of an elastic victim", () => {
    const s = snapshot(
      [gpuNode("n1", 3)],
      [queue("a", 0, { deserved: 1 }), queue("b", 1, { deserved: 2 })],
      [
        job("a0", "a", [running("n1"), running("n1"), running("n1")], { ageMinutes: 40, minMember: 1 }),
        job("b0", "b", [pending(), pending()], { ageMinutes: 5 }),
      ],
    );
    const r = run(s, ["reclaim"]);
    expect(r.evictions).toEqual(["a0-1", "a0-2"]);
    expect(r.pipelines).toEqual(["b0-0@n1", "b0-1@n1"]);
  });

  it("leaves non-preemptible jobs alone", () => {
    const s = snapshot(
      [gpuNode("n1", 2)],
      [queue("a", 0, { deserved: 0 }), queue("b", 1, { deserved: 2 })],
      [
        job("a0", "a", [running("n1"), running("n1")], { ageMinutes: 40, priority: 100 }),
        job("b0", "b", [pending()], { ageMinutes: 5 }),
      ],
    );
    const r = run(s, ["reclaim"]);
    expect(r.evictions).toEqual([]);
    expect(r.pipelines).toEqual([]);
  });

  it("places a gang whole or not at all", () => {
    const s = snapshot(
      [gpuNode("n1", 2)],
      [queue("a", 0, { deserved: 0 }), queue("b", 1, { deserved: 3 })],
      [
        job("a0", "a", [running("n1"), running("n1")], { ageMinutes: 40 }),
        job("b0", "b", [pending(), pending(), pending()], { ageMinutes: 5 }),
      ],
    );
    const r = run(s, ["reclaim"]);
    // 3 GPUs are needed and only 2 exist: evicting a0 would not be enough.
    expect(r.evictions).toEqual([]);
    expect(r.pipelines).toEqual([]);
  });
});
