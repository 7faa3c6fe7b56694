// Admission's compact snapshot (each node's held pods folded into one, queues carrying what they
// hold) answers an allocate dry run exactly as the full snapshot does: same placements, same fit
// errors, same fair shares, over random clusters with whole-GPU, CPU-only, shared-GPU and
// releasing pods, nodes that report their devices, queue limits and non-preemptible jobs.
import { describe, expect, it } from "vitest";
import {
  computeFairShare,
  defaultSchedulerConfig,
  type NodeSpec,
  type PodGroupSpec,
  type PodSpec,
  type QueueSpec,
  runSession,
  type Snapshot,
} from "../../src/core/index.js";
import { fairShareConfig } from "../../src/fair-share/fair-share.js";
import { ClusterBase, ClusterView } from "../../workers/admission/cluster-view.js";
import { capacityNode, compactHeld, HELD_JOB } from "../../workers/admission/compact.js";
import { job, NOW, node, pod, prng, queue } from "../../bench/generate.js";

const GiB = 1024 ** 3;

/** A running pod of whole resources (the kind every node folds). */
const isWhole = (p: PodSpec) => p.status === "Running" && !p.request.gpuFraction;

function randomCluster(seed: number): {
  snapshot: Snapshot;
  held: PodGroupSpec[];
  candidates: PodGroupSpec[];
} {
  const rnd = prng(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!;
  const nodes: NodeSpec[] = Array.from({ length: 12 }, (_, i) => {
    const n = node(`node-${i}`, 32_000, 256 * GiB, 8, { zone: `z${i % 3}` });
    if (i % 4 === 0)
      n.gpuDevices = Array.from({ length: 8 }, (_, d) => ({ index: d, nvlinkDomain: `d${d >> 2}` }));
    if (i % 5 === 4) n.allocatable.pods = 6;
    return n;
  });
  const queues: QueueSpec[] = [
    queue("dept", null, 0, 40),
    queue("a", "dept", 1, 16),
    queue("b", "dept", 2, 16),
  ];
  queues.push({ ...queue("c", "dept", 3, 8), limit: { gpu: 20, cpuMillis: -1, memory: -1 } });
  const leaves = ["a", "b", "c"];
  const used = new Map(nodes.map((n) => [n.name, { gpus: 0, devices: [] as number[], cpu: 0, pods: 0 }]));
  const held: PodGroupSpec[] = [];
  for (let j = 0; j < 30; j++) {
    const pods: PodSpec[] = [];
    for (let k = 0; k < 1 + Math.floor(rnd() * 4); k++) {
      const n = pick(nodes);
      const u = used.get(n.name)!;
      if (u.pods >= n.allocatable.pods - 1 || u.cpu > 24_000) continue;
      const kind = rnd();
      const gpus = kind < 0.5 ? 1 + Math.floor(rnd() * 2) : 0;
      if (u.gpus + gpus > 8) continue;
      const p = pod(
        `h${j}-${k}`,
        { cpuMillis: 2000, memory: 8 * GiB, gpus },
        rnd() < 0.15 ? "Releasing" : "Running",
        n.name,
      );
      if (kind > 0.9 && u.gpus < 8) {
        p.request.gpus = 0;
        p.request.gpuFraction = 0.5;
        p.gpuGroups = [`g-${n.name}`];
      }
      if (n.gpuDevices && gpus) {
        p.gpuDevices = Array.from({ length: gpus }, (_, d) => u.gpus + d);
      }
      u.gpus += gpus + (p.request.gpuFraction ? 1 : 0);
      u.cpu += 2000;
      u.pods++;
      pods.push(p);
    }
    if (pods.length)
      held.push(job(`held-${j}`, pick(leaves), pods, NOW - 100_000 + j, rnd() < 0.3 ? 120 : 50));
  }
  const candidates = Array.from({ length: 14 }, (_, j) => {
    const gpus = pick([0, 1, 2]);
    const pods = Array.from({ length: 1 + Math.floor(rnd() * 4) }, (_, k) =>
      pod(`c${j}-${k}`, { cpuMillis: 4000, memory: 16 * GiB, gpus }),
    );
    return job(`cand-${j}`, pick(leaves), pods, NOW - 1000 + j, rnd() < 0.3 ? 120 : 50);
  });
  return { snapshot: { now: NOW, nodes, queues, jobs: [], topologies: [] }, held, candidates };
}

const config = { ...defaultSchedulerConfig(), actions: ["allocate" as const] };

const answers = (s: Snapshot, candidates: PodGroupSpec[]) => {
  const r = runSession({ ...s, jobs: [...s.jobs, ...candidates] }, config);
  const ids = new Set(candidates.map((c) => c.uid));
  return {
    binds: r.binds.map((b) => [b.job, b.pod, b.node, b.gpuGroups, b.gpuDevices ?? []]),
    fitErrors: r.jobs.filter((o) => ids.has(o.uid)).map((o) => [o.uid, o.fitErrors]),
  };
};

describe("compact snapshot", () => {
  it("gives the full snapshot's placements, fit errors and fair shares", () => {
    let foldedPods = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const { snapshot, held, candidates } = randomCluster(seed);
      const full = { ...snapshot, jobs: held };
      const compact = compactHeld(snapshot, held);
      foldedPods += held.flatMap((j) => j.pods).length - compact.jobs.flatMap((j) => j.pods).length;
      expect(answers(compact, candidates), `seed ${seed}`).toEqual(answers(full, candidates));
      const shares = (s: Snapshot) =>
        computeFairShare(
          { ...s, jobs: [...s.jobs, ...candidates] },
          fairShareConfig(defaultSchedulerConfig()),
        );
      expect(shares(compact), `seed ${seed}`).toEqual(shares(full));
      // Nothing but the folded pods held: the ready capacity as one node gives the same shares.
      const folded = compactHeld(
        snapshot,
        held.map((j) => ({ ...j, pods: j.pods.filter(isWhole) })),
      );
      const heldJob = folded.jobs.filter((j) => j.uid === HELD_JOB);
      expect(shares({ ...folded, nodes: [capacityNode(folded.nodes)], jobs: [] }), `seed ${seed}`).toEqual(
        shares({ ...folded, jobs: heldJob }),
      );
    }
    expect(foldedPods).toBeGreaterThan(100); // the comparison is about compacted snapshots
  });

  it("gives a cluster's headrooms with the pods it would place now folded into their queues", () => {
    let reserved = 0;
    let partly = 0;
    let placedByPass = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const { snapshot, held, candidates } = randomCluster(seed);
      // Half the candidates already wait on the cluster (the base reserves what fits of them);
      // the others are a pass's candidates.
      // (some elastic: part of such a job may be placed while the rest waits).
      const waiting = candidates
        .filter((_, i) => i % 2 === 0)
        .map((j, i) => (i % 2 ? j : { ...j, minMember: 1 }));
      const asked = candidates
        .filter((_, i) => i % 2 === 1)
        .map((spec) => ({
          spec,
          cluster: null,
          clusterSelector: [],
          topologies: [],
          assignedAt: null,
          pendingReason: null,
          podNeeds: { extendedResources: [], resourceClaims: false },
        }));
      const summary = {
        name: "c",
        labels: {},
        ready: true,
        lost: false,
        cordoned: false,
        podPolicy: { extendedResources: [], resourceClaims: false },
      };
      const base = ClusterBase.of(summary, { ...snapshot, jobs: [...held, ...waiting] }, config);
      reserved += base.queueJobs.length;
      partly += base.queueJobs.filter((j) => base.pending.some((w) => w.uid === j.uid)).length;
      const view = new ClusterView(base);
      view.evaluateShares(asked);
      // What the shares were before the fold: every held part of a job in the session, on the nodes.
      const shares = computeFairShare(
        { ...base.compact, jobs: [...base.queueJobs, ...base.pending, ...asked.map((c) => c.spec)] },
        fairShareConfig(defaultSchedulerConfig()),
      );
      const same = (shares: ReturnType<typeof computeFairShare>, at: string) => {
        for (const s of shares) {
          const waits = base.waitingByQueue.get(s.queue) ?? { gpu: 0, cpuMillis: 0, memory: 0 };
          expect(view.headroom(s.queue), `seed ${seed} ${at} queue ${s.queue}`).toEqual({
            gpu: s.fairShare.gpu - s.allocated.gpu - waits.gpu,
            cpuMillis: s.fairShare.cpuMillis - s.allocated.cpuMillis - waits.cpuMillis,
            memory: s.fairShare.memory - s.allocated.memory - waits.memory,
          });
        }
      };
      same(shares, "before the pass placed anything");
      // The pass places here every asked job that fits; the others are asked again.
      view.evaluate(asked, { shares: false });
      const binds = runSession(
        { ...base.compact, jobs: [...base.compact.jobs, ...asked.map((c) => c.spec)] },
        config,
      ).binds;
      const fit = asked.filter((c) => view.fitsNow(c.spec.uid).fits);
      const placed = fit.map((c): PodGroupSpec => {
        const pods = c.spec.pods.flatMap((p) => {
          const b = binds.find((x) => x.pod === p.uid);
          if (!b) return [];
          const devices = b.gpuDevices?.length ? { gpuDevices: b.gpuDevices } : {};
          return [
            {
              ...p,
              status: "Binding" as const,
              node: b.node,
              gpuGroups: b.gpuGroups,
              ...devices,
              subGroup: null,
            },
          ];
        });
        return { ...c.spec, minMember: pods.length, subGroups: [], topology: null, pods };
      });
      for (const c of fit) view.admit(c, { gpu: 0, cpuMillis: 0, memory: 0 }, true);
      placedByPass += fit.length;
      const rest = asked.filter((c) => !fit.includes(c));
      view.evaluateShares(rest);
      same(
        computeFairShare(
          {
            ...base.compact,
            jobs: [...base.queueJobs, ...base.pending, ...placed, ...rest.map((c) => c.spec)],
          },
          fairShareConfig(defaultSchedulerConfig()),
        ),
        "after it placed some",
      );
    }
    // The comparison is about pods the cluster would place now, of jobs with pods left waiting too.
    expect(placedByPass).toBeGreaterThan(20); // and jobs a pass placed
    expect(reserved).toBeGreaterThan(20);
    expect(partly).toBeGreaterThan(5);
  });
});
