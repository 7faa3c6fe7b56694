// A victim search stopped by its scenario budget goes on in the next session from where it
// stopped (Snapshot.searchCursors / SessionResult.searchCursors), so a bounded search still
// reaches the solution an unbounded one finds, a few sessions later.
import { describe, expect, it } from "vitest";
import { type SearchCursor, type Snapshot, runSession } from "../../../src/core/index.js";
import { NOW, config, decisions, job, queue, running, snapshot } from "./snapshots.js";

/**
 * Four CPU nodes of 4 cores, each full with four 1-core victims (v1 on n0, v2 on n1, …,
 * v5 on n0 again: the victim queue offers them round the nodes). A pending 4-core pod of
 * higher priority fits only once all four victims of one node are in the scenario: the
 * 13th victim, after twelve failed simulations.
 */
function crowded(without: string[] = []): Snapshot {
  const nodes = ["n0", "n1", "n2", "n3"].map((name) => ({
    name,
    labels: {},
    taints: [],
    unschedulable: false,
    ready: true,
    allocatable: { cpuMillis: 4000, memory: 64e9, gpus: 0, pods: 110, extended: {} },
    gpuMemory: 0,
    gpuMemorySynced: true,
    gpuModel: null,
    migStrategy: null,
  }));
  const victims = Array.from({ length: 16 }, (_, i) =>
    // Newest first out of the victim queue: v1 is the newest.
    job(`v${i + 1}`, "q", [running(`n${i % 4}`, 0)], { priority: 10, ageMinutes: 10 + i }),
  ).filter((j) => !without.includes(j.uid));
  const big = job("big", "q", [{ gpus: 0 }], { priority: 50, ageMinutes: 1 });
  big.pods[0]!.request.cpuMillis = 4000;
  return snapshot(nodes, [queue("q", 0, { deserved: 0 })], [...victims, big]);
}

const bounded = (maxScenariosPerJob: number) => config(["preempt"], { maxScenariosPerJob });

function session(s: Snapshot, cursors: SearchCursor[], perJob = 5) {
  const r = runSession({ ...s, searchCursors: cursors }, bounded(perJob));
  return { result: r, ...decisions(r) };
}

describe("victim search cursors", () => {
  it("unbounded, the search needs thirteen simulations and evicts the four victims of n0", () => {
    const r = session(crowded(), [], -1);
    expect(r.evictions).toEqual(["v1-0", "v13-0", "v5-0", "v9-0"]);
    expect(r.result.searchCursors).toEqual([]);
  });

  it("bounded to five per session, it goes on from its cursor and finds the same solution in the third session", () => {
    const first = session(crowded(), []);
    expect(first.evictions).toEqual([]);
    expect(first.result.searchCursors).toEqual([
      {
        action: "preempt",
        job: "big",
        tasks: 1,
        prefix: 1,
        recordedVictims: [],
        // The scenario of no victim at all, then v1 … v4: five examined.
        afterScenarios: 5,
        lastVictim: "v4",
        leftAt: NOW,
      },
    ]);
    const big = first.result.jobs.find((j) => j.uid === "big")!;
    expect(big.fitErrors.join("\n")).toMatch(
      /preempt: search stopped after 5 scenarios .*maxScenariosPerJob = 5/,
    );

    const second = session(crowded(), first.result.searchCursors);
    expect(second.evictions).toEqual([]);
    expect(second.result.searchCursors.map((c) => [c.afterScenarios, c.lastVictim])).toEqual([[10, "v9"]]);

    const third = session(crowded(), second.result.searchCursors);
    expect(third.evictions).toEqual(["v1-0", "v13-0", "v5-0", "v9-0"]);
    expect(third.pipelines).toEqual(["big-0@n0"]);
    expect(third.result.searchCursors).toEqual([]);
  });

  it("without the cursor the same budget never gets there", () => {
    for (let i = 0; i < 4; i++) {
      const r = session(crowded(), []);
      expect(r.evictions).toEqual([]);
    }
  });

  it("a cursor the cluster no longer matches is dropped and the search starts over", () => {
    const first = session(crowded(), []);
    // v3 is gone: the fifth scenario now ends with v5, not v4.
    const second = session(crowded(["v3"]), first.result.searchCursors);
    expect(second.evictions).toEqual([]);
    expect(second.result.searchCursors.map((c) => [c.afterScenarios, c.lastVictim])).toEqual([[5, "v5"]]);
  });

  it("a cursor whose recorded victim is no longer placed is not resumed", () => {
    const cursor: SearchCursor = {
      action: "preempt",
      job: "big",
      tasks: 1,
      prefix: 1,
      recordedVictims: [{ job: "v2", pod: "no-such-pod" }],
      afterScenarios: 5,
      lastVictim: "v4",
      leftAt: NOW,
    };
    const r = session(crowded(), [cursor]);
    expect(r.result.searchCursors.map((c) => [c.recordedVictims, c.afterScenarios])).toEqual([[[], 5]]);
  });

  it("a cursor the session does not get to is handed on while its job waits", () => {
    const first = session(crowded(), []);
    const r = runSession(
      { ...crowded(), searchCursors: first.result.searchCursors },
      config(["preempt"], { maxScenariosPerAction: 0 }),
    );
    expect(r.searchCursors).toEqual(first.result.searchCursors);
    // … and dropped once the job is gone.
    const gone = crowded();
    gone.jobs = gone.jobs.filter((j) => j.uid !== "big");
    expect(
      runSession({ ...gone, searchCursors: first.result.searchCursors }, bounded(5)).searchCursors,
    ).toEqual([]);
  });

  it("a cursor no session took for searchCursorIdleSeconds is dropped: the search starts over", () => {
    const first = session(crowded(), []);
    const later = (seconds: number, idle: number) =>
      runSession(
        { ...crowded(), now: NOW + seconds * 1000, searchCursors: first.result.searchCursors },
        config(["preempt"], { maxScenariosPerJob: 5, searchCursorIdleSeconds: idle }),
      ).searchCursors.map((c) => [c.afterScenarios, c.leftAt]);
    // Taken within the limit: the search goes on (ten examined), the new cursor left now.
    expect(later(300, 300)).toEqual([[10, NOW + 300_000]]);
    // Idle past it: started over (five examined again).
    expect(later(301, 300)).toEqual([[5, NOW + 301_000]]);
    // -1: never dropped.
    expect(later(86_400, -1)).toEqual([[10, NOW + 86_400_000]]);
    // Not taken (the action has no budget) and past the limit: not handed on either.
    const handedOn = (seconds: number) =>
      runSession(
        { ...crowded(), now: NOW + seconds * 1000, searchCursors: first.result.searchCursors },
        config(["preempt"], { maxScenariosPerAction: 0, searchCursorIdleSeconds: 300 }),
      ).searchCursors;
    expect(handedOn(300)).toEqual(first.result.searchCursors);
    expect(handedOn(301)).toEqual([]);
  });

  it("a malformed cursor is refused, naming what is wrong", () => {
    const bad = [{ action: "preempt", job: "big", tasks: 1, prefix: 2 } as unknown as SearchCursor];
    expect(() => session(crowded(), bad)).toThrow(
      /snapshot\.searchCursors\[0\]: prefix must be an integer from 1 to tasks \(1\), got 2/,
    );
    const unknown = [{ action: "evict" } as unknown as SearchCursor];
    expect(() => session(crowded(), unknown)).toThrow(/searchCursors\[0\]: unknown action "evict"/);
    const left = session(crowded(), []).result.searchCursors;
    const undated = left.map(({ leftAt: _, ...c }) => c as SearchCursor);
    expect(() => session(crowded(), undated)).toThrow(/searchCursors\[0\]: leftAt must be a time in ms/);
  });

  it("searches going on from a cursor take at most half of an action's budget: the jobs behind them get the rest", () => {
    // Two big jobs ahead of a 1-core one in preempt's order (priority, then age); ten
    // scenarios for the action, five a job. The second big one asks a little less, so the
    // scheduling-signature skip does not pass it over once the first has stopped.
    const withSmall = () => {
      const s = crowded();
      const big = s.jobs.find((j) => j.uid === "big")!;
      const big2 = structuredClone(big);
      Object.assign(big2, { uid: "big2", name: "big2", createdAt: big.createdAt - 60_000 });
      big2.pods[0]!.uid = big2.pods[0]!.name = "big2-0";
      big.pods[0]!.request.cpuMillis = 3900;
      const small = job("small", "q", [{ gpus: 0 }], { priority: 30, ageMinutes: 1 });
      return { ...s, jobs: [...s.jobs, big2, small] };
    };
    const cycle = (cursors: SearchCursor[]) => {
      const r = runSession(
        { ...withSmall(), searchCursors: cursors },
        config(["preempt"], { maxScenariosPerJob: 5, maxScenariosPerAction: 10 }),
      );
      const errors = (uid: string) => r.jobs.find((j) => j.uid === uid)!.fitErrors.join("\n");
      return { r, ...decisions(r), errors };
    };
    const first = cycle([]);
    expect(first.evictions).toEqual([]);
    expect(first.r.searchCursors.map((c) => c.job)).toEqual(["big", "big2"]);
    expect(first.errors("small")).toMatch(/search stopped after 0 scenarios .*maxScenariosPerAction = 10\)/);

    const second = cycle(first.r.searchCursors);
    // big2 went on with its five; big waits with its cursor; small got the other half.
    expect(second.evictions).toEqual(["v1-0"]);
    expect(second.pipelines).toEqual(["small-0@n0"]);
    expect(second.errors("big")).toMatch(/half of it for searches going on from an earlier cycle/);
    const byJob = new Map(second.r.searchCursors.map((c) => [c.job, c]));
    expect(byJob.get("big")).toEqual(first.r.searchCursors.find((c) => c.job === "big"));
    expect(byJob.get("big2")!.afterScenarios).toBe(10);
  });
});
