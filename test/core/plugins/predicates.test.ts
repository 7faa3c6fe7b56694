import { describe, expect, it } from "vitest";
import { fitErrors, placements, run } from "../helpers.js";

const node = (extra: Record<string, unknown> = {}) => ({
  gpus: 4,
  cpuMillis: 32_000,
  memory: 128e9,
  ...extra,
});

describe("predicates", () => {
  it("honours node affinity by node name", () => {
    const r = run({
      nodes: { a: node(), b: node() },
      jobs: [{ name: "j", queue: "q", perTask: { gpus: 1 }, tasks: [{ nodeAffinity: ["b"] }] }],
    });
    expect(placements(r)).toEqual({ "j-0": "b" });
  });

  it("keeps pods off tainted nodes unless they tolerate the taint", () => {
    const taint = [{ key: "dedicated", value: "infer", effect: "NoSchedule" as const }];
    const r = run({
      nodes: { a: node({ taints: taint }), b: node({ gpus: 1 }) },
      jobs: [
        { name: "plain", queue: "q", ageMinutes: 2, perTask: { gpus: 2 }, tasks: [{}] },
        {
          name: "tolerant",
          queue: "q",
          ageMinutes: 1,
          perTask: { gpus: 2 },
          tasks: [
            { tolerations: [{ key: "dedicated", operator: "Equal", value: "infer", effect: "NoSchedule" }] },
          ],
        },
      ],
    });
    expect(placements(r)).toEqual({ "tolerant-0": "a" });
    expect(fitErrors(r, "plain").join(" ")).toMatch(/untolerated taint \{dedicated: infer\}/);
  });

  it("requires one of the asked GPU models", () => {
    const r = run({
      nodes: { a: node({ gpuModel: "A100" }), b: node({ gpuModel: "H100" }) },
      jobs: [{ name: "j", queue: "q", perTask: { gpus: 1 }, tasks: [{ gpuModels: ["H100"] }] }],
    });
    expect(placements(r)).toEqual({ "j-0": "b" });
  });

  it("counts pod slots", () => {
    const r = run({
      nodes: { a: node({ maxPods: 1 }) },
      jobs: [
        { name: "r", queue: "q", perTask: { cpuMillis: 100 }, tasks: [{ state: "Running", node: "a" }] },
        { name: "j", queue: "q", perTask: { cpuMillis: 100 }, tasks: [{}] },
      ],
    });
    expect(placements(r)).toEqual({});
  });

  it("keeps non-MIG pods off mixed-strategy MIG nodes and places MIG instances there", () => {
    const r = run({
      nodes: {
        mig: { gpus: 1, migStrategy: "mixed", migInstances: { "nvidia.com/mig-1g.10gb": 7 } },
        plain: node(),
      },
      jobs: [
        { name: "whole", queue: "q", perTask: { gpus: 1 }, tasks: [{ nodeAffinity: ["mig"] }] },
        { name: "slice", queue: "q", tasks: [{ migInstances: { "nvidia.com/mig-1g.10gb": 1 } }] },
      ],
    });
    expect(placements(r)).toEqual({ "slice-0": "mig" });
  });

  it("keeps pods off unschedulable (cordoned) nodes", () => {
    const r = run({
      nodes: { a: node({ unschedulable: true }), b: node() },
      jobs: [{ name: "j", queue: "q", perTask: { gpus: 1 }, tasks: [{}] }],
    });
    expect(placements(r)).toEqual({ "j-0": "b" });
  });

  it("applies pod anti-affinity within a topology domain", () => {
    const zone = (z: string) => node({ labels: { zone: z } });
    const anti = [{ matchLabels: { app: "db" }, topologyKey: "zone" }];
    const r = run({
      nodes: { a: zone("z1"), b: zone("z1"), c: zone("z2") },
      jobs: [
        {
          name: "db1",
          queue: "q",
          perTask: { gpus: 1 },
          tasks: [{ state: "Running", node: "a", labels: { app: "db" } }],
        },
        {
          name: "db2",
          queue: "q",
          perTask: { gpus: 1 },
          tasks: [{ labels: { app: "db" }, podAntiAffinity: anti }],
        },
      ],
    });
    expect(placements(r)).toEqual({ "db2-0": "c" });
  });
});
