import { describe, expect, it } from "vitest";
import { boundPods, fitErrors, placements, run } from "./helpers.js";

const gpuNode = (gpus: number) => ({ gpus, cpuMillis: 64_000, memory: 256e9 });

describe("allocate", () => {
  it("places a gang all-or-nothing at its minimum", () => {
    const r = run({
      nodes: { n1: gpuNode(2), n2: gpuNode(1) },
      jobs: [
        { name: "big", queue: "q", perTask: { gpus: 1 }, tasks: [{}, {}, {}, {}] },
        { name: "small", queue: "q", perTask: { gpus: 1 }, tasks: [{}, {}] },
      ],
    });
    // big needs 4 GPUs, only 3 exist: nothing of it is placed; small takes 2.
    expect(boundPods(r)).toEqual(["small-0", "small-1"]);
    expect(fitErrors(r, "big").join(" ")).toMatch(
      /Resources were found for 3 pods while 4 are required for gang scheduling/,
    );
  });

  it("grows an elastic job one pod at a time beyond its minimum", () => {
    const r = run({
      nodes: { n1: gpuNode(3) },
      jobs: [{ name: "e", queue: "q", minMember: 1, perTask: { gpus: 1 }, tasks: [{}, {}, {}, {}, {}] }],
    });
    expect(boundPods(r)).toEqual(["e-0", "e-1", "e-2"]);
  });

  it("binpacks GPU pods onto the fullest node that fits", () => {
    const r = run({
      nodes: { a: gpuNode(8), b: gpuNode(8) },
      jobs: [
        { name: "run", queue: "q", perTask: { gpus: 6 }, tasks: [{ state: "Running", node: "b" }] },
        { name: "p", queue: "q", perTask: { gpus: 1 }, tasks: [{}] },
      ],
    });
    expect(placements(r)).toEqual({ "p-0": "b" });
  });

  it("spreads when configured to", () => {
    const r = run({
      config: { placement: { gpu: "spread" } },
      nodes: { a: gpuNode(8), b: gpuNode(8) },
      jobs: [
        { name: "run", queue: "q", perTask: { gpus: 6 }, tasks: [{ state: "Running", node: "b" }] },
        { name: "p", queue: "q", perTask: { gpus: 1 }, tasks: [{}] },
      ],
    });
    expect(placements(r)).toEqual({ "p-0": "a" });
  });

  it("pipelines a gang onto resources still being released", () => {
    const r = run({
      nodes: { a: gpuNode(2) },
      jobs: [
        { name: "old", queue: "q", perTask: { gpus: 2 }, tasks: [{ state: "Releasing", node: "a" }] },
        { name: "new", queue: "q", perTask: { gpus: 1 }, tasks: [{}, {}] },
      ],
    });
    expect(r.binds).toEqual([]);
    expect(r.pipelines.map((p) => p.pod).sort()).toEqual(["new-0", "new-1"]);
  });

  it("serves the higher-priority job first within a queue", () => {
    const r = run({
      nodes: { a: gpuNode(1) },
      jobs: [
        { name: "low", queue: "q", priority: 50, ageMinutes: 10, perTask: { gpus: 1 }, tasks: [{}] },
        { name: "high", queue: "q", priority: 125, perTask: { gpus: 1 }, tasks: [{}] },
      ],
    });
    expect(boundPods(r)).toEqual(["high-0"]);
  });

  it("serves the older job first at equal priority", () => {
    const r = run({
      nodes: { a: gpuNode(1) },
      jobs: [
        { name: "young", queue: "q", ageMinutes: 1, perTask: { gpus: 1 }, tasks: [{}] },
        { name: "old", queue: "q", ageMinutes: 5, perTask: { gpus: 1 }, tasks: [{}] },
      ],
    });
    expect(boundPods(r)).toEqual(["old-0"]);
  });

  it("alternates between queues by fair share", () => {
    const r = run({
      nodes: { a: gpuNode(4) },
      queues: [
        { name: "dept", deserved: { gpu: -1 } },
        { name: "qa", parent: "dept", deserved: { gpu: 2 } },
        { name: "qb", parent: "dept", deserved: { gpu: 2 } },
      ],
      jobs: [
        { name: "a1", queue: "qa", ageMinutes: 9, perTask: { gpus: 1 }, tasks: [{}] },
        { name: "a2", queue: "qa", ageMinutes: 8, perTask: { gpus: 1 }, tasks: [{}] },
        { name: "a3", queue: "qa", ageMinutes: 7, perTask: { gpus: 1 }, tasks: [{}] },
        { name: "b1", queue: "qb", ageMinutes: 1, perTask: { gpus: 1 }, tasks: [{}] },
        { name: "b2", queue: "qb", ageMinutes: 1, perTask: { gpus: 1 }, tasks: [{}] },
      ],
    });
    // Each queue deserves 2 of the 4 GPUs: qa's third job waits although it is the oldest.
    expect(boundPods(r)).toEqual(["a1-0", "a2-0", "b1-0", "b2-0"]);
  });

  it("refuses a job over its queue's limit, naming the limit", () => {
    const r = run({
      nodes: { a: gpuNode(8) },
      queues: [{ name: "q", deserved: { gpu: 1 }, limit: { gpu: 2 } }],
      jobs: [{ name: "j", queue: "q", perTask: { gpus: 1 }, tasks: [{}, {}, {}] }],
    });
    expect(r.binds).toEqual([]);
    expect(fitErrors(r, "j").join(" ")).toMatch(/q quota has reached the allowable limit of 2 GPUs/);
  });

  it("places sub-groups as separate gangs", () => {
    const r = run({
      nodes: { a: gpuNode(3) },
      jobs: [
        {
          name: "j",
          queue: "q",
          subGroups: [
            { name: "leader", minMember: 1 },
            { name: "workers", minMember: 2 },
          ],
          perTask: { gpus: 1 },
          tasks: [
            { subGroup: "leader" },
            { subGroup: "workers" },
            { subGroup: "workers" },
            { subGroup: "workers" },
          ],
        },
      ],
    });
    // Minimums first (1 leader + 2 workers = 3 GPUs); the fourth pod does not fit.
    expect(boundPods(r)).toEqual(["j-0", "j-1", "j-2"]);
  });

  it("records why a job is pending, per node", () => {
    const r = run({
      nodes: { a: gpuNode(2), b: gpuNode(2) },
      jobs: [
        {
          name: "run",
          queue: "q",
          perTask: { gpus: 1 },
          tasks: [
            { state: "Running", node: "a" },
            { state: "Running", node: "b" },
          ],
        },
        { name: "j", queue: "q", perTask: { gpus: 2 }, tasks: [{}] },
      ],
    });
    expect(fitErrors(r, "j").join(" ")).toMatch(/2 node\(s\) didn't have enough resources: GPUs/);
  });

  it("says up front when no node is big enough", () => {
    const r = run({
      nodes: { a: gpuNode(1), b: gpuNode(1) },
      jobs: [{ name: "j", queue: "q", perTask: { gpus: 2 }, tasks: [{}] }],
    });
    expect(fitErrors(r, "j").join(" ")).toMatch(
      /Max GPU resources available in a single node .* is topped at 1/,
    );
  });

  it("sets the last start time of a job it starts, not of one it only grows", () => {
    const r = run({
      nodes: { a: gpuNode(4) },
      jobs: [
        { name: "new", queue: "q", perTask: { gpus: 1 }, tasks: [{}] },
        {
          name: "grow",
          queue: "q",
          minMember: 1,
          lastStartMinutesAgo: 30,
          perTask: { gpus: 1 },
          tasks: [{ state: "Running", node: "a" }, {}],
        },
      ],
    });
    const byUid = Object.fromEntries(r.jobs.map((j) => [j.uid, j.lastStartAt]));
    expect(byUid.new).not.toBeNull();
    expect(byUid.grow).toBe(Date.UTC(2025, 0, 1) - 30 * 60_000);
  });
});
