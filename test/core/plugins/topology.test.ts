// The topology plugin through whole sessions on small hand-made clusters: where each
// pod lands, and why a job stays pending.
import { describe, expect, it } from "vitest";
import {
  type NodeSpec,
  type PodGroupSpec,
  type PodStatus,
  type SessionResult,
  type Snapshot,
  type SubGroupSpec,
  type TopologyConstraintSpec,
  defaultSchedulerConfig,
  openSession,
  runSession,
} from "../../../src/core/index.js";

const NOW = Date.UTC(2025, 0, 1);
const RACK = "topology.example/rack";
const ZONE = "topology.example/zone";

function node(name: string, gpus: number, labels: Record<string, string>): NodeSpec {
  return {
    name,
    labels,
    taints: [],
    unschedulable: false,
    ready: true,
    allocatable: { cpuMillis: 8000, memory: 8e9, gpus, pods: 110, extended: {} },
    gpuMemory: 16000,
    gpuMemorySynced: true,
    gpuModel: null,
    migStrategy: null,
  };
}

interface TaskDef {
  state?: PodStatus;
  node?: string;
  subGroup?: string;
  /** Ask for nothing at all (a best-effort pod). */
  bestEffort?: boolean;
}

function job(
  name: string,
  tasks: TaskDef[],
  opts: {
    topology?: TopologyConstraintSpec;
    minMember?: number;
    subGroups?: SubGroupSpec[];
    ageMinutes?: number;
  } = {},
): PodGroupSpec {
  return {
    uid: name,
    name,
    namespace: "ns",
    queue: "q",
    priority: 50,
    preemptible: true,
    minMember: opts.minMember ?? tasks.length,
    createdAt: NOW - (opts.ageMinutes ?? 1) * 60_000,
    lastStartAt: tasks.some((t) => t.state === "Running") ? NOW - 60_000 : null,
    staleSince: null,
    subGroups: opts.subGroups ?? [],
    topology: opts.topology ?? null,
    pods: tasks.map((t, i) => ({
      uid: `${name}-${i}`,
      name: `${name}-${i}`,
      namespace: "ns",
      status: t.state ?? "Pending",
      node: t.node ?? null,
      request: t.bestEffort
        ? { cpuMillis: 0, memory: 0, gpus: 0, gpuFraction: 0, gpuMemory: 0, mig: {}, extended: {} }
        : { cpuMillis: 100, memory: 1e8, gpus: 1, gpuFraction: 0, gpuMemory: 0, mig: {}, extended: {} },
      gpuGroups: [],
      labels: {},
      subGroup: t.subGroup ?? null,
      priority: null,
      createdAt: null,
    })),
  };
}

const pending = (n: number): TaskDef[] => Array.from({ length: n }, () => ({}));

function snapshotOf(nodes: NodeSpec[], jobs: PodGroupSpec[], levels: string[]): Snapshot {
  return {
    now: NOW,
    nodes,
    queues: [
      {
        name: "q",
        parent: null,
        priority: 100,
        createdAt: NOW,
        deserved: { gpu: -1, cpuMillis: -1, memory: -1 },
        limit: { gpu: -1, cpuMillis: -1, memory: -1 },
        overQuotaWeight: { gpu: 1, cpuMillis: 1, memory: 1 },
      },
    ],
    jobs,
    topologies: [{ name: "dc", levels }],
  };
}

function allocateOnly() {
  const config = defaultSchedulerConfig();
  config.actions = ["allocate"];
  return config;
}

function run(nodes: NodeSpec[], jobs: PodGroupSpec[], levels: string[] = [ZONE, RACK]): SessionResult {
  return runSession(snapshotOf(nodes, jobs, levels), allocateOnly());
}

/** pod → node of this session's binds. */
const placements = (r: SessionResult) => Object.fromEntries(r.binds.map((b) => [b.pod, b.node]));
const fitErrors = (r: SessionResult, uid: string) => r.jobs.find((j) => j.uid === uid)!.fitErrors;

describe("topology plugin", () => {
  it("keeps a gang with a required level inside one rack, even when another node is fuller", () => {
    const nodes = [
      node("n0", 2, { [ZONE]: "z1", [RACK]: "r1" }),
      node("n1", 2, { [ZONE]: "z1", [RACK]: "r1" }),
      node("n2", 2, { [ZONE]: "z1", [RACK]: "r2" }),
      node("n3", 2, { [ZONE]: "z1", [RACK]: "r2" }),
    ];
    const running = job("running", [{ state: "Running", node: "n0" }], { ageMinutes: 2 });
    const gang = job("gang", pending(4), { topology: { topology: "dc", required: RACK, preferred: null } });
    const r = run(nodes, [running, gang]);
    // Rack r1 has only 3 free GPUs; r2 holds all 4.
    expect(placements(r)).toEqual({ "gang-0": "n2", "gang-1": "n2", "gang-2": "n3", "gang-3": "n3" });
  });

  it("picks the most packed rack that can hold the gang", () => {
    const nodes = [
      node("a0", 2, { [ZONE]: "z1", [RACK]: "r2" }),
      node("a1", 3, { [ZONE]: "z1", [RACK]: "r2" }),
      node("b0", 2, { [ZONE]: "z1", [RACK]: "r1" }),
      node("b1", 2, { [ZONE]: "z1", [RACK]: "r1" }),
    ];
    const running = job(
      "running",
      [
        { state: "Running", node: "a0" },
        { state: "Running", node: "b0" },
      ],
      {
        ageMinutes: 2,
      },
    );
    const gang = job("gang", pending(3), { topology: { topology: "dc", required: RACK, preferred: null } });
    const r = run(nodes, [running, gang]);
    // r1 (3 free) is fuller than r2 (4 free) and holds the 3 pods; plain binpacking would start on a0.
    expect(placements(r)).toEqual({ "gang-0": "b0", "gang-1": "b1", "gang-2": "b1" });
  });

  it("packs a preferred-level job into one rack when a rack can hold it", () => {
    const nodes = [
      node("n0", 2, { [ZONE]: "z1", [RACK]: "r1" }),
      node("n1", 2, { [ZONE]: "z1", [RACK]: "r2" }),
    ];
    const running = job("running", [{ state: "Running", node: "n0" }], { ageMinutes: 2 });
    const gang = job("gang", pending(2), { topology: { topology: "dc", required: null, preferred: RACK } });
    const r = run(nodes, [running, gang]);
    // Plain binpacking would start on n0 (1 free GPU) and split the job across racks.
    expect(placements(r)).toEqual({ "gang-0": "n1", "gang-1": "n1" });
  });

  it("spills a preferred-level job over racks when no rack can hold it, filling the best-scored rack first", () => {
    const nodes = [
      node("n0", 2, { [ZONE]: "z1", [RACK]: "r1" }),
      node("n1", 2, { [ZONE]: "z1", [RACK]: "r2" }),
    ];
    const gang = job("gang", pending(3), { topology: { topology: "dc", required: null, preferred: RACK } });
    const r = run(nodes, [gang]);
    // No rack holds 3: the zone is used, and the racks are scored 5·10⁴ (r1) and 10·10⁴ (r2).
    expect(placements(r)).toEqual({ "gang-0": "n1", "gang-1": "n1", "gang-2": "n0" });
  });

  it("leaves a job naming an unknown topology pending with a fit error", () => {
    const nodes = [node("n0", 2, { [ZONE]: "z1", [RACK]: "r1" })];
    const gang = job("gang", pending(1), { topology: { topology: "nope", required: RACK, preferred: null } });
    const r = run(nodes, [gang]);
    expect(r.binds).toEqual([]);
    expect(fitErrors(r, "gang")).toContain("Requested topology nope does not exist");
  });

  it("ignores a constraint without a topology name", () => {
    const nodes = [node("n0", 2, {}), node("n1", 2, {})];
    const gang = job("gang", pending(2), { topology: { topology: null, required: RACK, preferred: null } });
    const r = run(nodes, [gang]);
    expect(placements(r)).toEqual({ "gang-0": "n0", "gang-1": "n0" });
  });

  it("never places a constrained job on nodes missing a level's label", () => {
    const nodes = [
      node("n0", 4, { [ZONE]: "z1" }), // no rack label: outside the topology
      node("n1", 2, { [ZONE]: "z1", [RACK]: "r1" }),
    ];
    const filler = job(
      "filler",
      [0, 1, 2].map(() => ({ state: "Running" as const, node: "n0" })),
      { ageMinutes: 2 },
    );
    const one = job("one", pending(1), { topology: { topology: "dc", required: RACK, preferred: null } });
    const r = run(nodes, [filler, one]);
    // Binpacking alone would choose n0 (1 free GPU).
    expect(placements(r)).toEqual({ "one-0": "n1" });
  });

  it("reports when the labelled nodes cannot hold the job", () => {
    const nodes = [node("n0", 4, { [ZONE]: "z1" }), node("n1", 2, { [ZONE]: "z1", [RACK]: "r1" })];
    const three = job("three", pending(3), { topology: { topology: "dc", required: RACK, preferred: null } });
    const r = run(nodes, [three]);
    expect(r.binds).toEqual([]);
    expect(fitErrors(r, "three")).toContain(
      `topology dc, requirement ${RACK} couldn't be satisfied for job <ns/three>: not enough resources in z1.r1 to allocate the job`,
    );
  });

  it("keeps a job that already runs in a rack there, even when another rack has room", () => {
    const nodes = [
      node("n0", 1, { [ZONE]: "z1", [RACK]: "r1" }),
      node("n1", 2, { [ZONE]: "z1", [RACK]: "r2" }),
    ];
    const elastic = job("elastic", [{ state: "Running", node: "n0" }, {}], {
      minMember: 1,
      topology: { topology: "dc", required: RACK, preferred: null },
    });
    const r = run(nodes, [elastic]);
    expect(r.binds).toEqual([]);
    expect(fitErrors(r, "elastic")).toContain(
      `topology dc, requirement ${RACK} couldn't be satisfied for job <ns/elastic>`,
    );
  });

  it("applies a sub-group's own constraint inside its parent's node set", () => {
    const nodes = [
      node("n0", 1, { [ZONE]: "z1", [RACK]: "r1" }),
      node("n1", 1, { [ZONE]: "z1", [RACK]: "r2" }),
      node("n2", 4, { [ZONE]: "z2", [RACK]: "r3" }),
      node("n3", 1, { [ZONE]: "z1", [RACK]: "r4" }),
    ];
    // The whole job must share a zone and the workers a rack: z1 is the fuller zone and
    // holds 3 pods, but none of its racks holds both workers, so everything goes to z2.
    const gang = job("gang", [{ subGroup: "workers" }, { subGroup: "workers" }, { subGroup: "driver" }], {
      topology: { topology: "dc", required: ZONE, preferred: null },
      subGroups: [
        {
          name: "workers",
          minMember: 2,
          parent: null,
          topology: { topology: "dc", required: RACK, preferred: null },
        },
        { name: "driver", minMember: 1, parent: null, topology: null },
      ],
    });
    const r = run(nodes, [gang]);
    expect(placements(r)).toEqual({ "gang-0": "n2", "gang-1": "n2", "gang-2": "n2" });
  });

  it("lists why no rack can hold the gang", () => {
    const nodes = [
      node("n0", 2, { [ZONE]: "z1", [RACK]: "r1" }),
      node("n1", 2, { [ZONE]: "z1", [RACK]: "r2" }),
    ];
    const gang = job("gang", pending(3), { topology: { topology: "dc", required: RACK, preferred: null } });
    const r = run(nodes, [gang]);
    expect(r.binds).toEqual([]);
    expect(fitErrors(r, "gang")).toEqual([
      "<z1.r1>: node-group z1.r1 can allocate only 2 of 3 required pods",
      "<z1.r2>: node-group z1.r2 can allocate only 2 of 3 required pods",
      `topology dc, requirement ${RACK} couldn't be satisfied for job <ns/gang>`,
    ]);
  });

  it("keeps a best-effort gang with a required level inside one rack", () => {
    const nodes = [
      node("n0", 2, { [ZONE]: "z1", [RACK]: "r1" }),
      node("n1", 2, { [ZONE]: "z1", [RACK]: "r2" }),
    ];
    const gang = job("gang", [{ bestEffort: true }, { bestEffort: true }], {
      topology: { topology: "dc", required: RACK, preferred: null },
    });
    const r = run(nodes, [gang]);
    const placed = Object.values(placements(r));
    expect(placed).toHaveLength(2);
    expect(new Set(placed).size).toBe(1);
  });

  it("splits a partial node set into the racks it covers, keeping only its nodes", () => {
    const nodes = [
      node("n0", 2, { [ZONE]: "z1", [RACK]: "r1" }),
      node("n1", 2, { [ZONE]: "z1", [RACK]: "r1" }),
      node("n2", 2, { [ZONE]: "z1", [RACK]: "r2" }),
      node("n3", 2, { [ZONE]: "z1", [RACK]: "r2" }),
      node("n4", 2, {}),
    ];
    const gang = job("gang", pending(1), { topology: { topology: "dc", required: RACK, preferred: null } });
    const ssn = openSession(snapshotOf(nodes, [gang], [ZONE, RACK]), allocateOnly());
    const j = ssn.jobs.get("gang")!;
    const subset = ssn.nodes.filter((n) => n.name !== "n1");
    const target = { name: j.root.name, topology: j.root.topology, podSets: j.podSetList, set: j.root };
    ssn.preJobAllocation(j);
    const { sets, error } = ssn.subsetNodes(j, target, j.pods, subset);
    expect(error).toBeNull();
    // Both racks count all their nodes (4 free GPUs each): ties go by id. n1 and the unlabelled n4 are left out.
    expect(sets.map((s) => s.map((n) => n.name))).toEqual([["n0"], ["n2", "n3"]]);
  });
});
