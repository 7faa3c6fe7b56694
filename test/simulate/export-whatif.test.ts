// The snapshot → scenario export (what `fleetq snapshot export` writes) reads back into the same
// snapshot, and a what-if cycle reports starts, evictions and fair shares without changing its input.
import { describe, expect, it } from "vitest";
import { defaultSchedulerConfig, loadSchedulerConfig, type Snapshot } from "../../src/core/index.js";
import { snapshotScenario } from "../../src/simulate/from-snapshot.js";
import { runScenario } from "../../src/simulate/run.js";
import { validateScenario } from "../../src/simulate/scenario.js";
import { scenarioSnapshot } from "../../src/simulate/to-snapshot.js";
import { WhatIfInputError, whatIf } from "../../src/simulate/what-if.js";
import { build } from "../core/helpers.js";

const NOW = Date.UTC(2026, 5, 1, 12);

/** A live-like snapshot: two queues, a team's training running, one job pending on quota. */
function live(): Snapshot {
  const { snapshot } = build({
    actions: ["allocate", "reclaim"],
    nodes: {
      a: { gpus: 4, labels: { zone: "z1" } },
      b: { gpus: 4, labels: { zone: "z2" }, taints: [{ key: "gpu", effect: "NoSchedule" }] },
      c: { gpus: 8, ready: false },
    },
    queues: [
      { name: "org", deserved: { gpu: -1 } },
      { name: "team-a", parent: "org", deserved: { gpu: 4 }, limit: { gpu: 8 } },
      { name: "team-b", parent: "org", deserved: { gpu: 0 }, limit: { gpu: 0 } },
    ],
    jobs: [
      {
        name: "train",
        queue: "team-a",
        ageMinutes: 30,
        lastStartMinutesAgo: 20,
        perTask: { gpus: 2 },
        tasks: [
          { state: "Running", node: "a" },
          { state: "Running", node: "a" },
        ],
      },
      {
        name: "train-2",
        queue: "team-a",
        ageMinutes: 5,
        perTask: { gpus: 1, cpuMillis: 500, memory: 1e9 },
        tasks: [
          {
            nodeSelector: [{ key: "zone", operator: "In", values: ["z2"] }],
            tolerations: [{ key: "gpu", operator: "Exists" }],
          },
        ],
      },
      {
        name: "eval",
        queue: "team-b",
        ageMinutes: 1,
        perTask: { gpus: 0.5 },
        tasks: [{ tolerations: [{ key: "gpu", operator: "Exists" }] }],
      },
    ],
  });
  // Two jobs of one name (names are not unique in a live cluster; uids are).
  const jobs = snapshot.jobs.map((j) => (j.uid === "train-2" ? { ...j, name: "train" } : j));
  return { ...snapshot, jobs, now: NOW };
}

describe("snapshot export", () => {
  it("reads back into the same nodes, queues, jobs and pods", () => {
    const snap = live();
    const cfg = defaultSchedulerConfig();
    const doc = JSON.parse(JSON.stringify(snapshotScenario(snap, cfg, { name: "cluster c1" })));
    const back = scenarioSnapshot(validateScenario(doc, "export.json"), NOW);
    expect(back.nodes).toEqual(snap.nodes);
    expect(back.queues.map(({ createdAt, ...q }) => q)).toEqual(
      snap.queues.map(({ createdAt, ...q }) => ({
        ...q,
        preemptMinRuntimeSeconds: null,
        reclaimMinRuntimeSeconds: null,
      })),
    );
    // Same jobs in the same order; names made unique, pods named after their job.
    expect(doc.jobs.map((j: { name: string }) => j.name)).toEqual(["train~train", "train~train2", "eval"]);
    expect(doc.jobs[1].tasks.map((t: { name: string }) => t.name)).toEqual(["train~train2/train-2-0"]);
    const strip = (s: Snapshot) =>
      s.jobs.map((j) => ({
        queue: j.queue,
        priority: j.priority,
        preemptible: j.preemptible,
        minMember: j.minMember,
        age: Math.round((s.now - j.createdAt) / 1000),
        lastStart: j.lastStartAt === null ? null : Math.round((s.now - j.lastStartAt) / 1000),
        pods: j.pods.map((p) => ({
          status: p.status,
          node: p.node,
          request: p.request,
          nodeSelector: p.nodeSelector ?? [],
          tolerations: p.tolerations ?? [],
        })),
      }));
    expect(strip(back)).toEqual(strip(snap));
  });

  it("`fleetq simulate` runs the exported scenario: the same outcome as a session on the snapshot", () => {
    const snap = live();
    const cfg = loadSchedulerConfig({ actions: ["allocate"] });
    const doc = validateScenario(JSON.parse(JSON.stringify(snapshotScenario(snap, cfg))), "export.json");
    const run = runScenario(doc);
    const o = run.outcomes[0]!;
    // The pending job with the z2 selector and toleration binds on b; eval (limit 0) does not.
    const bound = Object.entries(o.tasks).filter(([, t]) => t.status === "Binding");
    expect(bound.map(([, t]) => t.node)).toEqual(["b"]);
    expect(o.nodes.c).toBeDefined();
  });
});

describe("what-if", () => {
  it("a quota raise makes the waiting job start; the input snapshot is unchanged", () => {
    const snap = live();
    const frozen = JSON.stringify(snap);
    const cfg = loadSchedulerConfig({ actions: ["allocate", "reclaim"] });
    const same = whatIf(snap, cfg, []);
    expect(same.starts.map((s) => s.name)).toEqual(["train"]);
    const raised = whatIf(snap, cfg, [{ queue: "team-b", resource: "gpu", deserved: 1, limit: 2 }]);
    expect(raised.starts.map((s) => s.name).sort()).toEqual(["eval", "train"]);
    const b = raised.queues.find((q) => q.queue === "team-b")!;
    expect(b.deservedBefore.gpu).toBe(0);
    expect(b.deservedAfter.gpu).toBe(1);
    expect(b.fairShareAfter.gpu).toBeGreaterThan(b.fairShareBefore.gpu);
    expect(b.allocatedBefore.gpu).toBe(0);
    expect(b.allocatedAfter.gpu).toBe(0.5);
    expect(JSON.stringify(snap)).toBe(frozen);
  });

  it("reports evictions when a raise lets reclaim take room back", () => {
    const { snapshot, config } = build({
      actions: ["allocate", "reclaim"],
      nodes: { a: { gpus: 4 } },
      queues: [
        { name: "x", deserved: { gpu: 0 } },
        { name: "y", deserved: { gpu: 0 } },
      ],
      jobs: [
        {
          name: "hog",
          queue: "x",
          lastStartMinutesAgo: 60,
          perTask: { gpus: 4 },
          tasks: [{ state: "Running", node: "a" }],
        },
        { name: "want", queue: "y", perTask: { gpus: 4 }, tasks: [{}] },
      ],
    });
    expect(whatIf(snapshot, config, []).evictions).toEqual([]);
    const r = whatIf(snapshot, config, [{ queue: "y", resource: "gpu", deserved: 4 }]);
    expect(r.evictions.map((e) => `${e.name}/${e.pod}@${e.node}`)).toEqual(["hog/hog-0@a"]);
    expect(r.pipelined.map((j) => j.name)).toEqual(["want"]);
  });

  it("bad input names the field", () => {
    const snap = live();
    const cfg = defaultSchedulerConfig();
    expect(() => whatIf(snap, cfg, [{ queue: "nope", resource: "gpu", deserved: 1 }])).toThrow(
      new WhatIfInputError("quotas[0].queue", "unknown queue nope"),
    );
    expect(() => whatIf(snap, cfg, [{ queue: "team-a", resource: "gpu", deserved: -3 }])).toThrow(
      /quotas\[0\]\.deserved/,
    );
    expect(() => whatIf(snap, cfg, [{ queue: "team-a", resource: "gpu" }])).toThrow(/quotas\[0\]/);
  });
});
