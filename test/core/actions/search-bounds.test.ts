// The bounds on the disruptive actions' victim search: the scenario budget (per job and
// per action) and the scheduling-signature skip of jobs no easier than one that failed.
import { describe, expect, it } from "vitest";
import { openSession } from "../../../src/core/index.js";
import {
  MinimalJobRepresentatives,
  easierToSchedule,
} from "../../../src/core/actions/common/minimal-job-representatives.js";
import { schedulingSignature } from "../../../src/core/actions/common/scheduling-signature.js";
import { config, contended, gpuNode, job, pending, queue, run, snapshot } from "./snapshots.js";

describe("victim search budget", () => {
  it("an unbounded search reclaims as usual", () => {
    const r = run(contended(), ["reclaim"], { maxScenariosPerJob: -1, maxScenariosPerAction: -1 });
    expect(r.evictions).toEqual(["a2-0", "a3-0"]);
  });

  it("a spent per-job budget stops the attempt: nothing changes, and the job says why", () => {
    const r = run(contended(), ["reclaim"], { maxScenariosPerJob: 0 });
    expect(r.evictions).toEqual([]);
    expect(r.pipelines).toEqual([]);
    const b0 = r.result.jobs.find((j) => j.uid === "b0")!;
    expect(b0.fitErrors.join("\n")).toMatch(
      /reclaim: search stopped after 0 scenarios .*maxScenariosPerJob = 0/,
    );
  });

  it("a spent per-action budget stops every later attempt of the action", () => {
    const r = run(contended(), ["reclaim"], { maxScenariosPerAction: 0 });
    expect(r.evictions).toEqual([]);
    const b0 = r.result.jobs.find((j) => j.uid === "b0")!;
    expect(b0.fitErrors.join("\n")).toMatch(/maxScenariosPerAction = 0/);
  });
});

describe("scheduling signatures", () => {
  // Two jobs of b asking 3 GPUs each: b deserves 2, so neither may reclaim.
  const hopeless = () =>
    contended([
      job("b1", "b", [pending(3)], { ageMinutes: 4 }),
      job("b2", "b", [pending(3)], { ageMinutes: 3 }),
    ]);

  it("equal constraints give equal signatures; a node selector changes it", () => {
    const s = hopeless();
    const ssn = openSession(s, config(["reclaim"]));
    const [b1, b2] = [ssn.jobs.get("b1")!, ssn.jobs.get("b2")!];
    expect(schedulingSignature(ssn, b1)).toBe(schedulingSignature(ssn, b2));
    const pinned = hopeless();
    pinned.jobs.find((j) => j.uid === "b2")!.pods[0]!.nodeSelector = [
      { key: "zone", operator: "In", values: ["x"] },
    ];
    const ssn2 = openSession(pinned, config(["reclaim"]));
    expect(schedulingSignature(ssn2, ssn2.jobs.get("b1")!)).not.toBe(
      schedulingSignature(ssn2, ssn2.jobs.get("b2")!),
    );
  });

  it("a job is easier only with fewer pending pods or a strictly smaller pod", () => {
    const s = snapshot(
      [gpuNode("n1", 4)],
      [queue("q", 0, { deserved: 4 })],
      [
        job("two", "q", [pending(), pending()]),
        job("twoAgain", "q", [pending(), pending()]),
        job("one", "q", [pending()]),
        job("bigger", "q", [pending(2), pending(2)]),
      ],
    );
    const ssn = openSession(s, config(["reclaim"]));
    const j = (n: string) => ssn.jobs.get(n)!;
    expect(easierToSchedule(j("twoAgain"), j("two"))).toBe(false);
    expect(easierToSchedule(j("one"), j("two"))).toBe(true);
    expect(easierToSchedule(j("bigger"), j("two"))).toBe(false);
    expect(easierToSchedule(j("two"), j("bigger"))).toBe(true);
    const reps = new MinimalJobRepresentatives(ssn);
    reps.update(j("bigger"));
    expect(reps.notEasierThan(j("two"))).toBeNull();
    reps.update(j("two")); // smaller footprint: becomes the representative
    expect(reps.notEasierThan(j("twoAgain"))).toBe(j("two"));
  });

  it("reclaim skips a job no easier than one that failed, and tries it when signatures are off", () => {
    // With no scenario allowed per job every attempt fails, saying so: the message shows
    // which jobs were tried.
    const tried = (useSchedulingSignatures: boolean) => {
      const s = contended([job("b1", "b", [pending(), pending()], { ageMinutes: 4 })]);
      const r = run(s, ["reclaim"], { useSchedulingSignatures, maxScenariosPerJob: 0 });
      return r.result.jobs
        .filter((j) => j.uid === "b0" || j.uid === "b1")
        .map((j) => [j.uid, j.fitErrors.some((e) => e.includes("search stopped"))]);
    };
    expect(tried(false)).toEqual([
      ["b0", true],
      ["b1", true],
    ]);
    expect(tried(true)).toEqual([
      ["b0", true],
      ["b1", false],
    ]);
  });
});
