import { describe, expect, it } from "vitest";
import { gpuNode, job, pending, queue, run, running, snapshot } from "./snapshots.js";

const oneQueue = [queue("q", 0, { deserved: -1 })];

describe("consolidation", () => {
  it("moves a running pod to another node to make room for a whole-node pod", () => {
    const s = snapshot([gpuNode("n1", 2), gpuNode("n2", 2)], oneQueue, [
      job("a", "q", [running("n1")], { ageMinutes: 30 }),
      job("b", "q", [running("n2")], { ageMinutes: 20 }),
      job("big", "q", [pending(2)], { ageMinutes: 5 }),
    ]);
    const r = run(s, ["consolidation"]);
    expect(r.evictions).toHaveLength(1);
    const moved = r.evictions[0]!;
    const from = moved === "a-0" ? "n1" : "n2";
    const to = from === "n1" ? "n2" : "n1";
    // The moved pod ends Pipelined on the other node and the big pod takes the emptied one.
    expect(r.pipelines).toEqual([`big-0@${from}`, `${moved}@${to}`].sort());
    const pods = new Map(r.result.pods.map((p) => [p.pod, p]));
    expect(pods.get(moved)?.status).toBe("Pipelined");
    expect(pods.get("big-0")?.status).toBe("Pipelined");
  });

  it("does not evict when the victim could not be re-placed", () => {
    const s = snapshot([gpuNode("n1", 2), gpuNode("n2", 1)], oneQueue, [
      job("a", "q", [running("n1")], { ageMinutes: 30 }),
      job("b", "q", [running("n2")], { ageMinutes: 20 }),
      job("big", "q", [pending(2)], { ageMinutes: 5 }),
    ]);
    const r = run(s, ["consolidation"]);
    expect(r.evictions).toEqual([]);
    expect(r.pipelines).toEqual([]);
  });

  it("never moves non-preemptible pods", () => {
    const s = snapshot([gpuNode("n1", 2), gpuNode("n2", 2)], oneQueue, [
      job("a", "q", [running("n1")], { ageMinutes: 30, priority: 100 }),
      job("b", "q", [running("n2")], { ageMinutes: 20, priority: 100 }),
      job("big", "q", [pending(2)], { ageMinutes: 5 }),
    ]);
    const r = run(s, ["consolidation"]);
    expect(r.evictions).toEqual([]);
    expect(r.pipelines).toEqual([]);
  });

  it("is disabled by maxConsolidationPreemptees 0", () => {
    const s = snapshot([gpuNode("n1", 2), gpuNode("n2", 2)], oneQueue, [
      job("a", "q", [running("n1")], { ageMinutes: 30 }),
      job("b", "q", [running("n2")], { ageMinutes: 20 }),
      job("big", "q", [pending(2)], { ageMinutes: 5 }),
    ]);
    const r = run(s, ["consolidation"], { maxConsolidationPreemptees: 0 });
    expect(r.evictions).toEqual([]);
    expect(r.pipelines).toEqual([]);
  });

  it("only runs for preemptible pending jobs", () => {
    const s = snapshot([gpuNode("n1", 2), gpuNode("n2", 2)], oneQueue, [
      job("a", "q", [running("n1")], { ageMinutes: 30 }),
      job("b", "q", [running("n2")], { ageMinutes: 20 }),
      job("big", "q", [pending(2)], { ageMinutes: 5, priority: 100 }),
    ]);
    const r = run(s, ["consolidation"]);
    expect(r.evictions).toEqual([]);
  });

  it("skips a job the cluster lacks the GPUs for", () => {
    const s = snapshot([gpuNode("n1", 2), gpuNode("n2", 2)], oneQueue, [
      job("a", "q", [running("n1")], { ageMinutes: 30 }),
      job("b", "q", [running("n2")], { ageMinutes: 20 }),
      job("huge", "q", [pending(2), pending(2)], { ageMinutes: 5 }),
    ]);
    const r = run(s, ["consolidation"]);
    expect(r.evictions).toEqual([]);
    expect(r.pipelines).toEqual([]);
  });
});
