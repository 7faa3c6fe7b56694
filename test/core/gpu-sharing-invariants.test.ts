// Invariants of GPU sharing over random snapshots mixing whole-GPU, fractional and
// GPU-memory pods, after a full session of all five actions:
// - no device is over-committed: what will hold each shared device once releasing pods
//   are gone fits its memory, and whole devices plus shared devices fit the node;
// - a whole-GPU pod never sits on a shared device (it has no GPU group), a shared pod
//   sits on exactly one;
// - the session's running accounting (idle / releasing / used, shared groups) equals
//   the accounting of the final pod states computed from scratch, so what evictions
//   freed is exactly what the node counts as releasing.
import { describe, expect, it } from "vitest";
import { defaultSchedulerConfig, openSession } from "../../src/core/index.js";
import { createAction } from "../../src/core/actions/registry.js";
import { NodeInfo } from "../../src/core/api/node-info.js";
import { build } from "./helpers.js";
import { prng } from "./actions/random-snapshots.js";

const MEM = 40_000;

/** A random cluster with a valid starting state (running pods fit their devices). */
function randomScenario(r: () => number) {
  const nNodes = 2 + Math.floor(r() * 3);
  const nodes: Record<string, { gpus: number; gpuMemory: number; cpuMillis: number; memory: number }> = {};
  const free: { name: string; whole: number; groups: Map<string, number> }[] = [];
  for (let i = 0; i < nNodes; i++) {
    const gpus = 2 + Math.floor(r() * 3);
    nodes[`n${i}`] = { gpus, gpuMemory: MEM, cpuMillis: 64_000, memory: 256e9 };
    free.push({ name: `n${i}`, whole: gpus, groups: new Map() });
  }
  const jobs = [];
  const queues = ["qa", "qb", "qc"];
  for (let j = 0; j < 10; j++) {
    const kind = r();
    const priority = [50, 75, 100, 125][Math.floor(r() * 4)]!;
    const queue = queues[Math.floor(r() * queues.length)]!;
    const pods = 1 + Math.floor(r() * 3);
    const perTask =
      kind < 0.4
        ? { gpus: 1 + Math.floor(r() * 2) }
        : kind < 0.75
          ? { gpus: [0.25, 0.5, 0.75][Math.floor(r() * 3)]! }
          : { gpuMemory: [10_000, 20_000][Math.floor(r() * 2)]! };
    const mem = "gpuMemory" in perTask ? perTask.gpuMemory : perTask.gpus < 1 ? perTask.gpus * MEM : 0;
    const tasks = [];
    const running = r() < 0.5;
    for (let k = 0; k < pods; k++) {
      if (!running) {
        tasks.push({});
        continue;
      }
      // Find room for the running pod, as a real cluster would have it.
      const n = free.find((f) =>
        mem ? [...f.groups.values()].some((u) => u + mem <= MEM) || f.whole > 0 : f.whole >= perTask.gpus!,
      );
      if (!n) {
        tasks.push({});
        continue;
      }
      if (!mem) {
        n.whole -= perTask.gpus!;
        tasks.push({ state: "Running" as const, node: n.name });
      } else {
        let g = [...n.groups].find(([, u]) => u + mem <= MEM)?.[0];
        if (g === undefined) {
          g = String(n.groups.size);
          n.whole -= 1;
          n.groups.set(g, 0);
        }
        n.groups.set(g, n.groups.get(g)! + mem);
        tasks.push({ state: "Running" as const, node: n.name, gpuGroups: [g] });
      }
    }
    jobs.push({ name: `j${j}`, queue, priority, minMember: 1, perTask, tasks, ageMinutes: j });
  }
  return {
    actions: [
      "allocate" as const,
      "consolidation" as const,
      "reclaim" as const,
      "preempt" as const,
      "stalegangeviction" as const,
    ],
    nodes,
    queues: [
      { name: "org", deserved: { gpu: -1 } },
      ...queues.map((q) => ({
        name: q,
        parent: "org",
        deserved: { gpu: Math.floor(r() * 4) },
        overQuotaWeight: { gpu: 1 },
      })),
    ],
    jobs,
  };
}

function accounting(n: NodeInfo) {
  const v = (x: { cpu: number; memory: number; gpus: number; pods: number }) => [
    x.cpu,
    x.memory,
    x.gpus,
    x.pods,
  ];
  const m = (x: Map<string, number>) => [...x].filter(([, y]) => y !== 0).sort();
  return {
    idle: v(n.idle),
    used: v(n.used),
    releasing: v(n.releasing),
    used_mem: m(n.shared.usedMemory),
    releasing_mem: m(n.shared.releasingMemory),
    allocated_mem: m(n.shared.allocatedMemory),
  };
}

const HOLDS_AFTER_RELEASE = new Set(["Running", "Binding", "Bound", "Allocated", "Pipelined"]);

describe("GPU sharing invariants", () => {
  it("holds over random mixed snapshots after all five actions", () => {
    let evictions = 0;
    let shared = 0;
    for (let seed = 1; seed <= 200; seed++) {
      const r = prng(seed);
      const { snapshot, config } = build(randomScenario(r));
      config.session.stalenessGracePeriodSeconds = 0;
      const ssn = openSession(snapshot, config);
      for (const a of config.actions) createAction(a).execute(ssn);
      evictions += ssn.evictions.length;
      const at = `seed ${seed}`;
      for (const n of ssn.nodes) {
        const groupMem = new Map<string, number>();
        let wholeHeld = 0;
        for (const j of ssn.jobs.values())
          for (const p of j.pods) {
            if (p.nodeName !== n.name || !HOLDS_AFTER_RELEASE.has(p.status)) continue;
            if (p.req.isShared) {
              expect(p.gpuGroups, `${at}: shared pod ${p.name} has one device`).toHaveLength(1);
              shared++;
              const mem = p.req.gpuMemory || p.req.gpuPortion * n.gpuMemory;
              groupMem.set(p.gpuGroups[0]!, (groupMem.get(p.gpuGroups[0]!) ?? 0) + mem);
            } else {
              expect(p.gpuGroups, `${at}: whole-GPU pod ${p.name} is on no shared device`).toEqual([]);
              wholeHeld += p.req.kind === "regular" ? p.req.gpuDevices : 0;
            }
          }
        for (const [g, mem] of groupMem)
          expect(mem, `${at}: device ${n.name}/${g} over-committed`).toBeLessThanOrEqual(n.gpuMemory);
        expect(
          wholeHeld + groupMem.size,
          `${at}: node ${n.name} has more devices taken than it has`,
        ).toBeLessThanOrEqual(n.gpuCount);
      }
      // Each node's accounting equals the one built from scratch from what it holds at the
      // end (releasing and running pods first, then those pipelined onto what they free) —
      // whatever sequence of placements, evictions and rollbacks led there. So what the
      // node counts as releasing is exactly what the evictions freed.
      for (const n of ssn.nodes) {
        const fresh = new NodeInfo(n.spec);
        const entries = [...n.pods.values()].sort(
          (a, b) =>
            Number(a.status === "Pipelined") - Number(b.status === "Pipelined") ||
            (a.pod.name < b.pod.name ? -1 : 1),
        );
        // A shared pod moved to another device of the same node stays counted on the old
        // device until it leaves it (KAI): its old entry is releasing there.
        for (const e of entries)
          if (
            e.status === "Pipelined" &&
            e.shared &&
            e.pod.spec.node === n.name &&
            e.pod.spec.gpuGroups.join() !== e.gpuGroups.join()
          )
            fresh.addEntry({ ...e, status: "Releasing", gpuGroups: [...e.pod.spec.gpuGroups] });
        for (const e of entries) fresh.addEntry({ ...e });
        expect(accounting(n), `${at}: node ${n.name}`).toEqual(accounting(fresh));
      }
    }
    // The generator must actually exercise sharing and evictions.
    expect(shared).toBeGreaterThan(100);
    expect(evictions).toBeGreaterThan(10);
  });

  it("uses the configuration it was given", () => {
    expect(defaultSchedulerConfig().actions).toHaveLength(5);
  });
});
