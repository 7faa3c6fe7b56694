// A device newly shared in a cycle gets an id no group on the node has: ids are named per
// session, and a later session reusing one would put its pods into another device's group.
import { expect, it } from "vitest";
import { createAction } from "../../src/core/actions/registry.js";
import { openSession } from "../../src/core/index.js";
import { build } from "./helpers.js";

it("a device newly shared on a node does not take the id of a group already there", () => {
  const { snapshot, config } = build({
    nodes: { n0: { gpus: 2, gpuMemory: 40_000, cpuMillis: 64_000, memory: 256e9 } },
    jobs: [
      {
        name: "full",
        queue: "q",
        minMember: 2,
        perTask: { gpus: 0.5 },
        tasks: [
          { state: "Running", node: "n0", gpuGroups: ["n0-gpu-1"] },
          { state: "Running", node: "n0", gpuGroups: ["n0-gpu-1"] },
        ],
      },
      { name: "new", queue: "q", minMember: 1, perTask: { gpus: 0.5 }, tasks: [{}] },
    ],
  });
  const ssn = openSession(snapshot, config);
  createAction("allocate").execute(ssn);
  const placed = [...ssn.jobs.values()].find((j) => j.name === "new")!.pods[0]!;
  expect(placed.nodeName).toBe("n0");
  expect(placed.gpuGroups).toHaveLength(1);
  expect(placed.gpuGroups[0]).not.toBe("n0-gpu-1");
});
