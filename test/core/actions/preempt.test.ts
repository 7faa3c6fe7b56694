import { describe, expect, it } from "vitest";
import { gpuNode, job, pending, queue, run, running, snapshot } from "./snapshots.js";

const oneQueue = [queue("q", 0, { deserved: -1 })];

describe("preempt", () => {
  it("displaces the lowest-priority preemptible job of the same queue", () => {
    const s = snapshot([gpuNode("n1", 2)], oneQueue, [
      job("low", "q", [running("n1")], { priority: 40, ageMinutes: 30 }),
      job("mid", "q", [running("n1")], { priority: 60, ageMinutes: 20 }),
      job("high", "q", [pending()], { priority: 80, ageMinutes: 5 }),
    ]);
    const r = run(s, ["preempt"]);
    expect(r.evictions).toEqual(["low-0"]);
    expect(r.pipelines).toEqual(["high-0@n1"]);
    expect(r.binds).toEqual([]);
  });

  it("evicts as many victims as the gang needs, all or none", () => {
    const s = snapshot([gpuNode("n1", 2)], oneQueue, [
      job("v1", "q", [running("n1")], { priority: 40, ageMinutes: 30 }),
      job("v2", "q", [running("n1")], { priority: 40, ageMinutes: 20 }),
      job("gang", "q", [pending(), pending()], { priority: 80, ageMinutes: 5 }),
    ]);
    const r = run(s, ["preempt"]);
    expect(r.evictions).toEqual(["v1-0", "v2-0"]);
    expect(r.pipelines).toEqual(["gang-0@n1", "gang-1@n1"]);
  });

  it("never evicts a non-preemptible job", () => {
    const s = snapshot([gpuNode("n1", 1)], oneQueue, [
      job("build", "q", [running("n1")], { priority: 100, ageMinutes: 30 }),
      job("inference", "q", [pending()], { priority: 125, ageMinutes: 5 }),
    ]);
    const r = run(s, ["preempt"]);
    expect(r.evictions).toEqual([]);
    expect(r.pipelines).toEqual([]);
  });

  it("never crosses queues and never preempts equal priority", () => {
    const s = snapshot(
      [gpuNode("n1", 2)],
      [queue("a", 0, { deserved: -1 }), queue("b", 1, { deserved: -1 })],
      [
        job("other-queue", "a", [running("n1")], { priority: 40, ageMinutes: 30 }),
        job("same-priority", "b", [running("n1")], { priority: 80, ageMinutes: 20 }),
        job("p", "b", [pending()], { priority: 80, ageMinutes: 5 }),
      ],
    );
    const r = run(s, ["preempt"]);
    expect(r.evictions).toEqual([]);
    expect(r.pipelines).toEqual([]);
  });

  it("does not evict when the victims could not make room", () => {
    const s = snapshot([gpuNode("n1", 2), gpuNode("n2", 2)], oneQueue, [
      job("low", "q", [running("n1")], { priority: 40, ageMinutes: 30 }),
      job("keep", "q", [running("n1"), running("n2"), running("n2")], { priority: 90, ageMinutes: 20 }),
      job("big", "q", [pending(3)], { priority: 80, ageMinutes: 5 }),
    ]);
    const r = run(s, ["preempt"]);
    expect(r.evictions).toEqual([]);
    expect(r.pipelines).toEqual([]);
  });

  it("lets allocate use free space first and preempts only for the rest", () => {
    const s = snapshot([gpuNode("n1", 2)], oneQueue, [
      job("low", "q", [running("n1")], { priority: 40, ageMinutes: 30 }),
      job("a", "q", [pending()], { priority: 80, ageMinutes: 10 }),
      job("b", "q", [pending()], { priority: 80, ageMinutes: 5 }),
    ]);
    const r = run(s, ["allocate", "preempt"]);
    expect(r.binds).toEqual(["a-0@n1"]);
    expect(r.evictions).toEqual(["low-0"]);
    expect(r.pipelines).toEqual(["b-0@n1"]);
  });
});
