import { describe, expect, it } from "vitest";
import { placements, run } from "../helpers.js";

const node = { gpus: 2, gpuMemory: 40_000, cpuMillis: 32_000, memory: 128e9 };

describe("GPU sharing", () => {
  it("packs fractional pods onto a partly used device before opening another", () => {
    const r = run({
      nodes: { a: node },
      jobs: [
        { name: "f1", queue: "q", ageMinutes: 3, perTask: { gpus: 0.5 }, tasks: [{}] },
        { name: "f2", queue: "q", ageMinutes: 2, perTask: { gpus: 0.25 }, tasks: [{}] },
        { name: "f3", queue: "q", ageMinutes: 1, perTask: { gpus: 0.25 }, tasks: [{}] },
      ],
    });
    const groups = new Set(r.binds.map((b) => b.gpuGroups.join(",")));
    expect(r.binds).toHaveLength(3);
    expect(groups.size).toBe(1);
  });

  it("never puts a whole-GPU pod on a shared device", () => {
    const r = run({
      nodes: { a: node },
      jobs: [
        {
          name: "f",
          queue: "q",
          perTask: { gpus: 0.5 },
          tasks: [{ state: "Running", node: "a", gpuGroups: ["0"] }],
        },
        { name: "w", queue: "q", perTask: { gpus: 2 }, tasks: [{}] },
      ],
    });
    expect(placements(r)).toEqual({});
  });

  it("sizes a GPU-memory request by the node's device memory", () => {
    const r = run({
      nodes: { a: node },
      jobs: [
        { name: "m1", queue: "q", perTask: { gpuMemory: 20_000 }, tasks: [{}] },
        { name: "m2", queue: "q", perTask: { gpuMemory: 20_000 }, tasks: [{}] },
      ],
    });
    expect(r.binds).toHaveLength(2);
    expect(r.binds[0]!.gpuGroups).toEqual(r.binds[1]!.gpuGroups);
  });

  it("spreads fractional pods over devices with gpuspread", () => {
    const r = run({
      config: {
        tiers: [
          {
            plugins: [
              { name: "proportion" },
              { name: "gpusharingorder" },
              { name: "gpuspread" },
              { name: "nodeplacement" },
            ],
          },
        ],
      },
      nodes: { a: node },
      jobs: [
        { name: "f1", queue: "q", ageMinutes: 2, perTask: { gpus: 0.25 }, tasks: [{}] },
        { name: "f2", queue: "q", ageMinutes: 1, perTask: { gpus: 0.25 }, tasks: [{}] },
      ],
    });
    expect(r.binds).toHaveLength(2);
    expect(r.binds[0]!.gpuGroups).not.toEqual(r.binds[1]!.gpuGroups);
  });
});
