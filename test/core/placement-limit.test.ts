// A session's placement limit (RunOptions.maxPlacements): allocate stops between jobs once the
// session placed that many pods, the actions after it do not run, and the result says which
// queued jobs were not tried. What a stopped session places is the start of what the same
// session without a limit places.
import { describe, expect, it } from "vitest";
import { resultHoldsUntil, runSession } from "../../src/core/index.js";
import {
  NOW,
  config,
  decisions,
  gpuNode,
  job,
  pending,
  queue,
  running,
  snapshot,
} from "./actions/snapshots.js";

const queues = [queue("a", 0, { deserved: 4 }), queue("b", 0, { deserved: 4 })];

/** 12 pending gangs of 3 one-GPU pods over two queues, with room for all of them. */
function backlog() {
  const nodes = Array.from({ length: 6 }, (_, i) => gpuNode(`n${i}`, 8));
  const jobs = Array.from({ length: 12 }, (_, i) =>
    job(`g${i}`, i % 2 ? "a" : "b", [pending(), pending(), pending()], { ageMinutes: 60 - i }),
  );
  return snapshot(nodes, queues, jobs);
}

describe("placement limit", () => {
  it("stops between jobs, never inside a gang, and names the jobs it did not try", () => {
    const s = backlog();
    const r = runSession(s, config(["allocate"]), { maxPlacements: 4 });
    // The first gang places 3 (< 4), the second takes it to 6: then allocate stops.
    expect(r.binds).toHaveLength(6);
    const placed = new Set(r.binds.map((b) => b.job));
    expect(placed.size).toBe(2);
    expect(r.stoppedAtLimit?.unreached.sort()).toEqual(
      s.jobs
        .map((j) => j.uid)
        .filter((u) => !placed.has(u))
        .sort(),
    );
    // Nothing holds: the next session places more.
    expect(resultHoldsUntil(s, r, config(["allocate"]))).toBe(s.now);
  });

  it("places the start of what the session without a limit places, in the same order", () => {
    const s = backlog();
    const all = runSession(s, config(["allocate"]));
    expect(all.binds).toHaveLength(36);
    expect(all.stoppedAtLimit).toBeUndefined();
    for (const limit of [1, 3, 5, 13, 31]) {
      const r = runSession(s, config(["allocate"]), { maxPlacements: limit });
      expect(r.binds, `limit ${limit}`).toEqual(all.binds.slice(0, r.binds.length));
      expect(r.binds.length).toBe(Math.ceil(limit / 3) * 3);
      expect(r.stoppedAtLimit, `limit ${limit}`).toBeDefined();
    }
    // Reached as the last job is placed, or not at all: nothing was left, nothing changes.
    for (const limit of [34, 36, 37]) {
      const r = runSession(s, config(["allocate"]), { maxPlacements: limit });
      expect(r.binds, `limit ${limit}`).toEqual(all.binds);
      expect(r.stoppedAtLimit, `limit ${limit}`).toBeUndefined();
    }
    // 0 is no limit.
    expect(runSession(s, config(["allocate"]), { maxPlacements: 0 }).binds).toEqual(all.binds);
  });

  it("runs no action after a stopped allocate: no eviction for a job free room could take", () => {
    const s = snapshot(
      [gpuNode("n1", 2), gpuNode("n2", 1)],
      [queue("q", 0, { deserved: -1 })],
      [
        job("low", "q", [running("n1"), running("n1")], { priority: 40, ageMinutes: 30 }),
        job("small-1", "q", [pending()], { priority: 60, ageMinutes: 20 }),
        job("small-2", "q", [pending()], { priority: 60, ageMinutes: 19 }),
        job("high", "q", [pending(), pending()], { priority: 80, ageMinutes: 5 }),
      ],
    );
    const actions = config(["allocate", "preempt"]);
    // Without a limit: high fits nowhere free, small-1 takes n2, then preempt evicts low.
    const all = decisions(runSession(s, actions));
    expect(all.binds).toEqual(["small-1-0@n2"]);
    expect(all.evictions).toContain("low-0");
    // Stopped after the first small job: preempt waits for the next session.
    const r = runSession(s, actions, { maxPlacements: 1 });
    expect(decisions(r)).toEqual({ binds: ["small-1-0@n2"], pipelines: [], evictions: [] });
    expect(r.stoppedAtLimit?.unreached).toEqual(["small-2"]);
    // A job tried and left pending is not among the unreached: its reasons are current.
    expect(r.jobs.find((j) => j.uid === "high")?.fitErrors.length).toBeGreaterThan(0);
  });

  it("keeps the session clock's rules: a stopped session stamps lastStartAt on what it placed", () => {
    const r = runSession(backlog(), config(["allocate"]), { maxPlacements: 3 });
    const placed = r.jobs.filter((j) => j.lastStartAt !== null);
    expect(placed.map((j) => j.lastStartAt)).toEqual([NOW]);
  });
});
