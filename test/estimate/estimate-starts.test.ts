// The start-time estimator: the cluster simulated forward with the real core, running jobs ending
// at their expected end. Pure: no database.
import { describe, expect, it } from "vitest";
import { loadSchedulerConfig } from "../../src/core/index.js";
import { estimateStarts, expectedEnd } from "../../src/estimate/estimate-starts.js";
import { build } from "../core/helpers.js";

const MIN = 60_000;

function cluster() {
  const { snapshot } = build({
    nodes: { n0: { gpus: 4 } },
    queues: [{ name: "q", deserved: { gpu: -1 } }],
    jobs: [
      {
        name: "r1",
        queue: "q",
        ageMinutes: 60,
        lastStartMinutesAgo: 10,
        perTask: { gpus: 2 },
        tasks: [{ state: "Running", node: "n0" }],
      },
      {
        name: "r2",
        queue: "q",
        ageMinutes: 60,
        lastStartMinutesAgo: 5,
        perTask: { gpus: 2 },
        tasks: [{ state: "Running", node: "n0" }],
      },
      { name: "p1", queue: "q", ageMinutes: 3, perTask: { gpus: 2 }, tasks: [{}] },
      { name: "p2", queue: "q", ageMinutes: 2, perTask: { gpus: 4 }, tasks: [{}] },
      { name: "p3", queue: "q", ageMinutes: 1, perTask: { gpus: 2 }, tasks: [{}] },
    ],
  });
  return snapshot;
}

const config = loadSchedulerConfig({ actions: ["allocate"] });

describe("estimateStarts", () => {
  it("pending jobs start as running ones end, in the scheduler's order", () => {
    const snap = cluster();
    const runtimes = new Map([
      ["r1", { expectedMs: 30 * MIN }], // ends in 20 min
      ["r2", { expectedMs: 60 * MIN }], // ends in 55 min
      ["p1", { expectedMs: 10 * MIN }],
      ["p2", { expectedMs: 10 * MIN }],
      ["p3", { expectedMs: 10 * MIN }],
    ]);
    const { starts } = estimateStarts(snap, config, { runtimes });
    // p1 takes r1's room at +20; when p1 ends (+30) p2 still does not fit (4 GPUs) but p3 does;
    // p2 gets the node once r2 (+55) and p3 (+40) are gone.
    expect(starts.get("p1")).toBe(snap.now + 20 * MIN);
    expect(starts.get("p3")).toBe(snap.now + 30 * MIN);
    expect(starts.get("p2")).toBe(snap.now + 55 * MIN);
  });

  it("falls back to the maximum run time, then to the queue's estimate; unknown → null", () => {
    const snap = cluster();
    const both = estimateStarts(snap, config, {
      runtimes: new Map([["r1", { maxMs: 15 * MIN }]]),
      queueRuntimeMs: new Map([["q", 40 * MIN]]),
    });
    // r1 ends at +5 (max 15), r2 at +35 (queue estimate 40); jobs started later run 40 min:
    // p1 +5 → +45, p3 +35 → +75, then p2.
    expect(both.starts.get("p1")).toBe(snap.now + 5 * MIN);
    expect(both.starts.get("p3")).toBe(snap.now + 35 * MIN);
    expect(both.starts.get("p2")).toBe(snap.now + 75 * MIN);
    const none = estimateStarts(snap, config, {});
    expect([...none.starts.values()]).toEqual([null, null, null]);
  });

  it("a job past every estimate is taken to end now; the horizon and the budget bound the work", () => {
    const snap = cluster();
    const r1 = snap.jobs.find((j) => j.uid === "r1")!;
    expect(expectedEnd(r1, snap.now, { runtimes: new Map([["r1", { expectedMs: 5 * MIN }]]) })).toBe(
      snap.now,
    );
    expect(
      expectedEnd(r1, snap.now, { runtimes: new Map([["r1", { expectedMs: 5 * MIN, maxMs: 60 * MIN }]]) }),
    ).toBe(snap.now + 50 * MIN);
    const runtimes = new Map(["r1", "r2", "p1", "p2", "p3"].map((j) => [j, { expectedMs: 30 * MIN }]));
    const short = estimateStarts(snap, config, { runtimes, horizonMs: 21 * MIN });
    expect(short.starts.get("p1")).toBe(snap.now + 20 * MIN);
    expect(short.starts.get("p2")).toBeNull();
    const budget = estimateStarts(snap, config, { runtimes, maxSessions: 1 });
    expect(budget.sessions).toBe(1);
    expect([...budget.starts.values()]).toEqual([null, null, null]);
  });

  it("a job that fits now starts now; the input snapshot is unchanged", () => {
    const { snapshot } = build({
      nodes: { n0: { gpus: 4 } },
      jobs: [{ name: "p", queue: "q", perTask: { gpus: 1 }, tasks: [{}] }],
    });
    const frozen = JSON.stringify(snapshot);
    expect(estimateStarts(snapshot, config).starts.get("p")).toBe(snapshot.now);
    expect(JSON.stringify(snapshot)).toBe(frozen);
  });
});

describe("run times from the queue's history", () => {
  it("a running job is expected to run the median of the recent runs that lasted longer than it has", () => {
    const snap = cluster();
    const r1 = snap.jobs.find((j) => j.uid === "r1")!; // started 10 min ago
    const samplesMs = new Map([["q", [5, 8, 20, 30, 60].map((m) => m * MIN)]]);
    // runs longer than 10 min: 20, 30, 60 → median 30 → ends 20 min from now
    expect(expectedEnd(r1, snap.now, { queueRuntimeSamplesMs: samplesMs })).toBe(snap.now + 20 * MIN);
    // past every recorded run: ends at once
    expect(expectedEnd(r1, snap.now, { queueRuntimeSamplesMs: new Map([["q", [MIN, 2 * MIN]]]) })).toBe(
      snap.now,
    );
    // declared run times come first
    const declared = new Map([["r1", { expectedMs: 15 * MIN }]]);
    expect(expectedEnd(r1, snap.now, { runtimes: declared, queueRuntimeSamplesMs: samplesMs })).toBe(
      snap.now + 5 * MIN,
    );
    // r1 ends at +20; r2, 5 min in, at +20 too (runs longer than 5 min: 8, 20, 30, 60 → 25);
    // p1 then, and p3 after p1's 20 min (the median of all runs).
    const { starts } = estimateStarts(snap, config, { queueRuntimeSamplesMs: samplesMs });
    expect(starts.get("p1")).toBe(snap.now + 20 * MIN);
    expect(starts.get("p2")).toBe(snap.now + 40 * MIN);
  });
});
