// Start estimates allowing for jobs not yet submitted: the median start over scenarios of arrivals
// drawn from the recent ones. Pure: no database.
import { describe, expect, it } from "vitest";
import { loadSchedulerConfig } from "../../src/core/index.js";
import { estimateStarts } from "../../src/estimate/estimate-starts.js";
import { drawArrivals, estimateStartsWithArrivals } from "../../src/estimate/scenarios.js";
import { build } from "../core/helpers.js";

const MIN = 60_000;
const config = loadSchedulerConfig({ actions: ["allocate"] });

// One node of 4 GPUs, two queues of 2 deserved GPUs each, each running a 2-GPU job; queue a's
// 4-GPU gang waits for both to end (+10 and +20). Queue b submits a 2-GPU job every minute or so.
function cluster() {
  return build({
    nodes: { n0: { gpus: 4 } },
    queues: [
      { name: "a", deserved: { gpu: 2 } },
      { name: "b", deserved: { gpu: 2 } },
    ],
    jobs: [
      {
        name: "ra",
        queue: "a",
        ageMinutes: 30,
        lastStartMinutesAgo: 20,
        perTask: { gpus: 2 },
        tasks: [{ state: "Running", node: "n0" }],
      },
      {
        name: "rb",
        queue: "b",
        ageMinutes: 30,
        lastStartMinutesAgo: 10,
        perTask: { gpus: 2 },
        tasks: [{ state: "Running", node: "n0" }],
      },
      { name: "gang", queue: "a", ageMinutes: 1, perTask: { gpus: 4 }, tasks: [{}] },
      { name: "small", queue: "b", ageMinutes: 5, perTask: { gpus: 2 }, tasks: [{}] },
    ],
  }).snapshot;
}

const runtimes = new Map(["ra", "rb", "gang", "small"].map((j) => [j, { expectedMs: 30 * MIN }]));

describe("estimateStartsWithArrivals", () => {
  it("without recent jobs it is the simulation without arrivals", () => {
    const snap = cluster();
    const base = estimateStarts(snap, config, { runtimes });
    const same = estimateStartsWithArrivals(snap, config, { runtimes, recent: [], recentWindowMs: 60 * MIN });
    expect([...same.starts]).toEqual([...base.starts]);
    const none = estimateStartsWithArrivals(snap, config, {
      runtimes,
      recent: [{ job: snap.jobs.find((j) => j.uid === "small")!, runtimeMs: 30 * MIN }],
      recentWindowMs: MIN,
      scenarios: 0,
    });
    expect([...none.starts]).toEqual([...base.starts]);
  });

  it("a gang waiting for room is estimated later when small jobs keep arriving to fill it", () => {
    const snap = cluster();
    const base = estimateStarts(snap, config, { runtimes });
    // Without arrivals: `small` takes ra's room at +10, the gang starts when rb and small are gone.
    expect(base.starts.get("gang")).toBe(snap.now + 40 * MIN);
    const small = snap.jobs.find((j) => j.uid === "small")!;
    const o = {
      runtimes,
      recent: Array.from({ length: 60 }, () => ({ job: small, runtimeMs: 30 * MIN })),
      recentWindowMs: 60 * MIN,
    };
    const later = estimateStartsWithArrivals(snap, config, o);
    expect(later.starts.get("gang")!).toBeGreaterThan(snap.now + 40 * MIN);
    // Deterministic: the same snapshot gives the same scenarios.
    expect([...estimateStartsWithArrivals(snap, config, o).starts]).toEqual([...later.starts]);
    expect(later.sessions).toBeGreaterThan(base.sessions);
  });

  it("draws arrivals as pending copies of recent jobs, before the given end", () => {
    const snap = cluster();
    const small = snap.jobs.find((j) => j.uid === "small")!;
    let x = 0;
    const next = () => {
      x = (x * 7 + 3) % 11;
      return x / 11;
    };
    const come = drawArrivals(
      [{ job: small, runtimeMs: MIN }],
      10 * MIN,
      snap.now,
      snap.now + 60 * MIN,
      next,
      "s",
    );
    expect(come.length).toBeGreaterThan(0);
    for (const a of come) {
      expect(a.at).toBeGreaterThanOrEqual(snap.now);
      expect(a.at).toBeLessThan(snap.now + 60 * MIN);
      expect(a.job.queue).toBe("b");
      expect(a.job.createdAt).toBe(a.at);
      expect(a.job.pods.every((p) => p.status === "Pending" && p.node === null)).toBe(true);
    }
    expect(new Set(come.map((a) => a.job.uid)).size).toBe(come.length);
  });
});
