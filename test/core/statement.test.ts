// The statement undoes exactly: after any random sequence of allocate / pipeline /
// evict / un-evict operations with checkpoints, rolling back restores every piece of
// session state — pods, jobs' counters, nodes' accounting (shared GPUs included) and
// the queues' allocated shares.
import { describe, expect, it } from "vitest";
import { POD_STATUSES, type Session, isActiveUsed, openSession } from "../../src/core/index.js";
import type { PodInfo } from "../../src/core/api/pod-info.js";
import { build } from "./helpers.js";
import { prng } from "./actions/random-snapshots.js";

/** Everything a rollback must restore, as plain data. */
function fingerprint(ssn: Session): unknown {
  const res = (r: {
    cpu: number;
    memory: number;
    gpus: number;
    pods: number;
    scalars: Map<string, number> | null;
  }) => [r.cpu, r.memory, r.gpus, r.pods, [...(r.scalars ?? [])].sort()];
  const m = (x: Map<string, number>) => [...x].filter(([, v]) => v !== 0).sort();
  return {
    nodes: ssn.nodes.map((n) => ({
      idle: res(n.idle),
      used: res(n.used),
      releasing: res(n.releasing),
      pods: [...n.pods.values()].map((e) => [e.pod.uid, e.status, e.gpuGroups.join(",")]).sort(),
      shared: [
        m(n.shared.usedMemory),
        m(n.shared.releasingMemory),
        m(n.shared.allocatedMemory),
        [...n.shared.releasingMarked].sort(),
      ],
    })),
    jobs: [...ssn.jobs.values()].map((j) => ({
      counts: POD_STATUSES.map((s) => j.countOf(s)),
      sets: j.podSetList.map((p) => [p.activeAllocated, p.activeUsed, p.alive, p.pending]),
      alloc: [j.allocatedGpus, j.allocatedCpu, j.allocatedMemory],
      pods: j.pods.map((p) => [p.status, p.nodeName, p.gpuGroups.join(","), p.isVirtual]),
    })),
    queues: ssn.queueSharesFn?.().map((q) => [q.queue, q.allocated]),
  };
}

function randomScenario(r: () => number) {
  const nodes: Record<string, { gpus: number; cpuMillis: number; memory: number; gpuMemory: number }> = {};
  const nNodes = 2 + Math.floor(r() * 3);
  for (let i = 0; i < nNodes; i++)
    nodes[`n${i}`] = { gpus: 4, cpuMillis: 16_000, memory: 64e9, gpuMemory: 1000 };
  const names = Object.keys(nodes);
  const jobs = [];
  for (let j = 0; j < 6; j++) {
    const running = r() < 0.5;
    const kind = r();
    const perTask =
      kind < 0.5
        ? { gpus: 1, cpuMillis: 1000 }
        : kind < 0.8
          ? { gpus: 0.5, cpuMillis: 500 }
          : { gpuMemory: 300, cpuMillis: 500 };
    const tasks = Array.from({ length: 1 + Math.floor(r() * 2) }, () =>
      running
        ? {
            state: "Running" as const,
            node: names[Math.floor(r() * names.length)]!,
            gpuGroups: kind < 0.5 ? [] : [`g${Math.floor(r() * 2)}`],
          }
        : {},
    );
    jobs.push({ name: `j${j}`, queue: j % 2 ? "qa" : "qb", perTask, tasks });
  }
  return {
    actions: ["allocate" as const],
    nodes,
    queues: [
      { name: "root", deserved: { gpu: -1 } },
      { name: "qa", parent: "root", deserved: { gpu: 2 } },
      { name: "qb", parent: "root", deserved: { gpu: 2 } },
    ],
    jobs,
  };
}

function randomOp(ssn: Session, st: ReturnType<Session["statement"]>, r: () => number): void {
  const pods: PodInfo[] = [...ssn.jobs.values()].flatMap((j) => j.pods);
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)];
  const op = r();
  if (op < 0.35) {
    const p = pick(pods.filter((x) => x.status === "Pending"));
    const node = pick(ssn.nodes);
    if (!p || !node) return;
    const groups = p.req.isShared ? [`s${Math.floor(r() * 3)}`] : p.gpuGroups;
    if (r() < 0.5) st.allocate(p, node.name, groups);
    else st.pipeline(p, node.name, true, groups);
  } else if (op < 0.7) {
    const p = pick(pods.filter((x) => isActiveUsed(x.status) && x.status !== "Releasing" && x.nodeName));
    if (p) st.evict(p, "test");
  } else {
    // Pipeline a task evicted in this statement back onto its own node: un-evicts it.
    const p = pick(pods.filter((x) => x.status === "Releasing" && x.isVirtual && x.nodeName));
    if (p) st.pipeline(p, p.nodeName!, false);
  }
}

describe("statement", () => {
  it("rollback restores the session exactly, over random operation sequences", () => {
    for (let seed = 1; seed <= 150; seed++) {
      const r = prng(seed);
      const { snapshot, config } = build(randomScenario(r));
      const ssn = openSession(snapshot, config);
      const before = fingerprint(ssn);
      const st = ssn.statement("allocate");
      const marks: { cp: number; fp: unknown }[] = [];
      const steps = 3 + Math.floor(r() * 12);
      for (let i = 0; i < steps; i++) {
        if (r() < 0.3) marks.push({ cp: st.checkpoint(), fp: fingerprint(ssn) });
        randomOp(ssn, st, r);
      }
      // Roll back to each checkpoint, latest first, then everything.
      for (const m of marks.reverse()) {
        st.rollback(m.cp);
        expect(fingerprint(ssn), `seed ${seed}: rollback to checkpoint ${m.cp}`).toEqual(m.fp);
      }
      st.discard();
      expect(fingerprint(ssn), `seed ${seed}: discard`).toEqual(before);
    }
  });

  it("commit hands the operations to the session's result in order", () => {
    const { snapshot, config } = build({
      nodes: { a: { gpus: 2 } },
      jobs: [
        { name: "run", queue: "q", perTask: { gpus: 1 }, tasks: [{ state: "Running", node: "a" }] },
        { name: "p", queue: "q", perTask: { gpus: 1 }, tasks: [{}, {}] },
      ],
    });
    const ssn = openSession(snapshot, config);
    const st = ssn.statement("allocate");
    const [p0, p1] = ssn.jobs.get("p")!.pods;
    const run = ssn.jobs.get("run")!.pods[0]!;
    st.allocate(p0!, "a");
    st.evict(run, "make room");
    st.pipeline(p1!, "a", true);
    st.commit();
    expect(ssn.binds.map((b) => b.pod)).toEqual(["p-0"]);
    expect(ssn.evictions.map((e) => [e.pod, e.message])).toEqual([["run-0", "make room"]]);
    expect(ssn.pipelines.map((e) => e.pod)).toEqual(["p-1"]);
    expect(p0!.status).toBe("Binding");
    expect(run.status).toBe("Releasing");
  });

  it("un-evicts a victim pipelined back onto the node it is leaving", () => {
    const { snapshot, config } = build({
      nodes: { a: { gpus: 2 } },
      jobs: [{ name: "run", queue: "q", perTask: { gpus: 1 }, tasks: [{ state: "Running", node: "a" }] }],
    });
    const ssn = openSession(snapshot, config);
    const st = ssn.statement("consolidation");
    const run = ssn.jobs.get("run")!.pods[0]!;
    st.evict(run, "x");
    st.pipeline(run, "a", false);
    expect(run.status).toBe("Running");
    st.commit();
    expect(ssn.evictions).toEqual([]);
    expect(ssn.pipelines).toEqual([]);
  });

  it("withdraws a placement this session made when that pod is evicted", () => {
    const { snapshot, config } = build({
      nodes: { a: { gpus: 2 }, b: { gpus: 2 } },
      jobs: [
        { name: "mv", queue: "q", perTask: { gpus: 1 }, tasks: [{ state: "Running", node: "a" }] },
        { name: "p", queue: "q", perTask: { gpus: 1 }, tasks: [{}] },
      ],
    });
    const ssn = openSession(snapshot, config);
    const idleB = ssn.nodeByName.get("b")!.idle.gpus;
    const first = ssn.statement("allocate");
    const p = ssn.jobs.get("p")!.pods[0]!;
    const mv = ssn.jobs.get("mv")!.pods[0]!;
    first.allocate(p, "b");
    first.evict(mv, "move");
    first.pipeline(mv, "b", true);
    first.commit();
    // A later action takes both placements back.
    const second = ssn.statement("consolidation");
    second.evict(p, "victim");
    second.evict(mv, "victim");
    second.commit();
    expect(p.status).toBe("Pending");
    expect(p.nodeName).toBeNull();
    // The moved pod is again only leaving its node: b counts nothing of either.
    expect(mv.status).toBe("Releasing");
    expect(mv.nodeName).toBe("a");
    expect(ssn.nodeByName.get("b")!.idle.gpus).toBe(idleB);
    expect(ssn.nodeByName.get("b")!.pods.size).toBe(0);
    expect(ssn.binds).toEqual([]);
    expect(ssn.pipelines).toEqual([]);
    expect(ssn.evictions.map((e) => [e.pod, e.message])).toEqual([["mv-0", "move"]]);
  });
});
