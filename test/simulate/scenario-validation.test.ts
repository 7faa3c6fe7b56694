// Scenario documents are checked strictly: the first bad field is named with its path.
import { describe, expect, it } from "vitest";
import { ScenarioError, validateScenario } from "../../src/simulate/scenario.js";

const base = {
  name: "s",
  actions: ["allocate"],
  nodes: { n1: { gpus: 2 } },
  queues: [{ name: "q", deserved: { gpu: -1 } }],
  jobs: [{ name: "j", queue: "q", perTask: { gpus: 1 }, tasks: [{}, { state: "Pending" }] }],
};

function refusal(doc: unknown): { field: string; reason: string } {
  try {
    validateScenario(doc, "f.yaml");
  } catch (e) {
    if (e instanceof ScenarioError) return { field: e.field, reason: e.reason };
    throw e;
  }
  throw new Error("accepted");
}

describe("scenario validation", () => {
  it("accepts a valid document as it is", () => {
    const doc = structuredClone(base);
    expect(validateScenario(doc, "f.yaml")).toBe(doc);
  });

  it.each([
    [{ ...base, nodes: { n1: { gpus: "two" } } }, "nodes.n1.gpus", /expected a number, got string/],
    [{ ...base, nodes: { n1: { gpus: Number.NaN } } }, "nodes.n1.gpus", /expected a number, got NaN/],
    [{ ...base, nodes: { n1: { gpus: Number.POSITIVE_INFINITY } } }, "nodes.n1.gpus", /got Infinity/],
    [{ ...base, nodez: {} }, "(root)", /^unknown field\(s\) nodez$/],
    [
      { ...base, jobs: [{ ...base.jobs[0], tasks: [{}, { state: "Sleeping" }] }] },
      "jobs[0].tasks[1].state",
      /expected one of Pending, .*: got "Sleeping"/,
    ],
    [
      { ...base, jobs: [{ ...base.jobs[0], tasks: [{ gpuz: 1 }] }] },
      "jobs[0].tasks[0]",
      /unknown field\(s\) gpuz/,
    ],
    [{ ...base, actions: [] }, "actions", /at least 1/],
    [{ ...base, queues: {} }, "queues", /expected an array, got object/],
    [{ ...base, name: undefined }, "name", /expected a string, got undefined/],
    [
      { ...base, config: { queueDepthPerAction: "deep" } },
      "config.queueDepthPerAction",
      /a number or an object/,
    ],
    [
      { ...base, queues: [{ name: "q", preemptMinRuntime: true }] },
      "queues[0].preemptMinRuntime",
      /duration/,
    ],
    [{ ...base, jobs: [{ ...base.jobs[0], queue: "nope" }] }, "jobs[0].queue", /unknown queue nope/],
    [[], "(root)", /expected an object, got array/],
  ])("refuses %#, naming the field", (doc, field, reason) => {
    const r = refusal(doc);
    expect(r.field).toBe(field);
    expect(r.reason).toMatch(reason);
  });

  it("takes null where a field may be null, and a number or a map for queueDepthPerAction", () => {
    const doc = {
      ...base,
      config: { queueDepthPerAction: { allocate: 3 } },
      queues: [{ name: "q", parent: null, limit: null, preemptMinRuntime: "5m", reclaimMinRuntime: 30 }],
      rounds: null,
      expect: null,
    };
    expect(validateScenario(doc, "f.yaml")).toBe(doc);
  });
});
