import { describe, expect, it } from "vitest";
import { defaultPluginRegistry } from "../../../src/core/index.js";
import { placements, run } from "../helpers.js";

const tiers = (args?: Record<string, unknown>) => [
  {
    plugins: [
      { name: "predicates" },
      { name: "proportion" },
      { name: "nodeavailability" },
      { name: "nodeplacement", arguments: { gpu: "binpack", cpu: "binpack" } },
      args ? { name: "gpumodelpreference", arguments: args } : { name: "gpumodelpreference" },
    ],
  },
];

const nodes = {
  a100: { gpus: 8, gpuModel: "A100" },
  h100: { gpus: 8, gpuModel: "H100" },
  l4: { gpus: 8, gpuModel: "L4" },
};
const filler = {
  name: "fill",
  queue: "q",
  perTask: { gpus: 6 },
  tasks: [{ state: "Running" as const, node: "a100" }],
};

describe("gpumodelpreference", () => {
  it("puts a pod on its preferred model although binpack would pick the fuller node", () => {
    const r = run({
      config: { tiers: tiers() },
      nodes,
      jobs: [
        filler,
        { name: "p", queue: "q", perTask: { gpus: 1 }, tasks: [{ preferredGpuModels: ["H100"] }] },
      ],
    });
    expect(placements(r)).toEqual({ "p-0": "h100" });
  });

  it("follows the order of preference", () => {
    const r = run({
      config: { tiers: tiers() },
      nodes,
      jobs: [
        { name: "p", queue: "q", perTask: { gpus: 1 }, tasks: [{ preferredGpuModels: ["L4", "H100"] }] },
      ],
    });
    expect(placements(r)).toEqual({ "p-0": "l4" });
  });

  it("is a wish: a full preferred node does not keep the pod pending", () => {
    const r = run({
      config: { tiers: tiers() },
      nodes: { a100: nodes.a100, h100: nodes.h100 },
      jobs: [
        { name: "full", queue: "q", perTask: { gpus: 8 }, tasks: [{ state: "Running", node: "h100" }] },
        { name: "p", queue: "q", perTask: { gpus: 1 }, tasks: [{ preferredGpuModels: ["H100"] }] },
      ],
    });
    expect(placements(r)).toEqual({ "p-0": "a100" });
  });

  it("leaves binpack alone for pods without a preference", () => {
    const r = run({
      config: { tiers: tiers() },
      nodes,
      jobs: [filler, { name: "p", queue: "q", perTask: { gpus: 1 }, tasks: [{}] }],
    });
    expect(placements(r)).toEqual({ "p-0": "a100" });
  });

  it("refuses a bad argument, naming it", () => {
    expect(() => defaultPluginRegistry().create("gpumodelpreference", { maxRanks: 20 })).toThrow(/maxRanks/);
  });
});
