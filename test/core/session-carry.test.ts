// A session opened with the previous session's jobs and nodes (SessionCarry) decides exactly
// what a session built from the snapshot alone decides: over consecutive cycles of seeded
// random clusters, with jobs changed, added and removed between cycles, nodes changed (a GPU
// fewer or more, a copy of the same spec), removed and added back, unbounded and bounded
// victim searches, and the carry used across changes of configuration.
import { describe, expect, it } from "vitest";
import { schedulingSignature } from "../../src/core/actions/common/scheduling-signature.js";
import { createAction } from "../../src/core/actions/registry.js";
import {
  type ActionName,
  type NodeSpec,
  type PodGroupSpec,
  type SchedulerConfig,
  SessionCarry,
  type Snapshot,
  advanceSnapshot,
  openSession,
  runSession,
  sessionResult,
} from "../../src/core/index.js";
import { config, gpuNode, job, queue, running, snapshot as snapshotOf } from "./actions/snapshots.js";
import { generate, prng } from "./actions/random-snapshots.js";

const ACTIONS: ActionName[] = ["allocate", "consolidation", "reclaim", "preempt", "stalegangeviction"];
const CASES = 150;

/** The session without a carry, and the snapshot of the next cycle. */
function fresh(snapshot: Snapshot, cfg: SchedulerConfig) {
  const ssn = openSession(snapshot, cfg);
  for (const a of cfg.actions) createAction(a).execute(ssn);
  const result = sessionResult(ssn);
  ssn.close();
  return { result, next: advanceSnapshot(snapshot, ssn, result, 10_000) };
}

/** Between cycles, what the cluster's users and agents do: a job's priority changed, one gone,
 * one back; a node's GPUs changed, a node reported again (a new spec object, the same content),
 * one gone, one back. */
function change(
  snapshot: Snapshot,
  rnd: () => number,
  removed: PodGroupSpec[],
  removedNodes: NodeSpec[],
): Snapshot {
  const nodes = [...snapshot.nodes];
  const n = rnd();
  const at = Math.floor(rnd() * nodes.length);
  if (n < 0.15 && nodes.length) {
    const spec = nodes[at]!;
    const gpus = Math.max(0, spec.allocatable.gpus + (rnd() < 0.5 ? -1 : 1));
    nodes[at] = { ...spec, allocatable: { ...spec.allocatable, gpus } };
  } else if (n < 0.3 && nodes.length) {
    nodes[at] = { ...nodes[at]! };
  } else if (
    n < 0.4 &&
    nodes.length > 1 &&
    !snapshot.jobs.some((j) => j.pods.some((p) => p.node === nodes[at]!.name))
  ) {
    removedNodes.push(...nodes.splice(at, 1));
  } else if (n < 0.5 && removedNodes.length) {
    nodes.push(removedNodes.pop()!);
  }
  const jobs = [...snapshot.jobs];
  const r = rnd();
  if (r < 0.25 && jobs.length) {
    const i = Math.floor(rnd() * jobs.length);
    jobs[i] = { ...jobs[i]!, priority: jobs[i]!.priority + 1 };
  } else if (r < 0.4 && jobs.length > 1) {
    removed.push(...jobs.splice(Math.floor(rnd() * jobs.length), 1));
  } else if (r < 0.55 && removed.length) {
    jobs.push(removed.pop()!);
  }
  return { ...snapshot, nodes, jobs };
}

describe("SessionCarry", () => {
  it("decides exactly what a session without it decides, cycle after cycle", () => {
    const configs = [config(ACTIONS), config(ACTIONS, { maxScenariosPerJob: 1, maxScenariosPerAction: 3 })];
    let carried = 0;
    let jobs = 0;
    let carriedNodes = 0;
    let nodes = 0;
    for (let seed = 1; seed <= CASES; seed++) {
      const rnd = prng(seed * 7919);
      let snapshot = generate(seed).snapshot;
      const carry = new SessionCarry();
      const removed: PodGroupSpec[] = [];
      const removedNodes: NodeSpec[] = [];
      for (let cycle = 1; cycle <= 5; cycle++) {
        const cfg = configs[(seed + cycle) % configs.length]!;
        const expected = fresh(snapshot, cfg);
        const withCarry = runSession(snapshot, cfg, { carry });
        expect(withCarry, `seed ${seed} cycle ${cycle}`).toEqual(expected.result);
        carried += carry.carried;
        jobs += snapshot.jobs.length;
        carriedNodes += carry.carriedNodes;
        nodes += snapshot.nodes.length;
        // Once more on the very same snapshot: every job the last session left untouched is carried.
        expect(runSession(snapshot, cfg, { carry }), `seed ${seed} cycle ${cycle}, again`).toEqual(
          expected.result,
        );
        snapshot = change(expected.next, rnd, removed, removedNodes);
      }
    }
    // The carry must actually be used, or this proves nothing.
    expect(carried / jobs).toBeGreaterThan(0.3);
    expect(carriedNodes / nodes).toBeGreaterThan(0.2);
  });

  it("counts a carried job's pods again when their node is built anew or gone", () => {
    // A shared-GPU pod's share depends on its node's GPU memory: 16,000 MiB of 16,000 is one GPU.
    const shared = job("f", "q0", [running("n0", 0)]);
    const pod = shared.pods[0]!;
    shared.pods[0] = { ...pod, request: { ...pod.request, gpuMemory: 16_000 }, gpuGroups: ["n0-gpu-1"] };
    const nodes = [gpuNode("n0", 4), gpuNode("n1", 4)];
    const first = snapshotOf(
      nodes,
      [queue("q0", 0, { deserved: 4 })],
      [job("w", "q0", [running("n1")]), shared],
    );
    const cfg = config(ACTIONS);
    const carry = new SessionCarry();
    const allocated = (s: Snapshot) => runSession(s, cfg).queues[0]!.allocated;
    runSession(first, cfg, { carry });
    // n0 reported again with twice the memory per GPU: the same pod now takes half a GPU.
    const smaller = { ...first, nodes: [{ ...nodes[0]!, gpuMemory: 32_000 }, nodes[1]!] };
    expect(allocated(smaller)).not.toEqual(allocated(first));
    expect(runSession(smaller, cfg, { carry })).toEqual(runSession(smaller, cfg));
    expect(carry.carried).toBe(2);
    // n1 gone: the pod still said to run there is on no node and counts for nothing.
    const without = { ...smaller, nodes: [smaller.nodes[0]!] };
    expect(allocated(without)).not.toEqual(allocated(smaller));
    expect(runSession(without, cfg, { carry })).toEqual(runSession(without, cfg));
    expect(carry.carried).toBe(2);
  });

  it("adds a node's pods in the order a session without it adds them, pods of equal names too", () => {
    // Pods of equal names go on a node in snapshot order; carried jobs may come in another order.
    const named = (j: PodGroupSpec): PodGroupSpec => ({
      ...j,
      pods: j.pods.map((p) => ({ ...p, name: p.name.replace(/^[a-z]+/, "w") })),
    });
    const jobs = ["a", "b", "c", "d"].map((n) => named(job(n, "q0", [running("n0"), running("n1")])));
    const first = snapshotOf([gpuNode("n0", 8), gpuNode("n1", 8)], [queue("q0", 0)], jobs);
    const cfg = config(ACTIONS);
    const order = (s: Snapshot, carry?: SessionCarry) =>
      openSession(s, cfg, { carry }).nodes.map((n) => [...n.pods.keys()]);
    const next = [
      // The same jobs in another order.
      { ...first, jobs: [jobs[1]!, jobs[0]!, jobs[3]!, jobs[2]!] },
      // One job changed (built anew), one gone, one new: the others carried in the same order.
      { ...first, jobs: [jobs[0]!, { ...jobs[1]! }, jobs[3]!, named(job("e", "q0", [running("n0")]))] },
    ];
    for (const s of next) {
      const carry = new SessionCarry();
      runSession(first, cfg, { carry });
      expect(order(s, carry)).toEqual(order(s));
      expect(carry.carried).toBeGreaterThan(1);
    }
  });

  it("hands what a job's pods alone gave to the next session, and none of a session's own memos", () => {
    const { snapshot } = generate(3);
    const cfg = config(ACTIONS);
    const carry = new SessionCarry();
    const first = openSession(snapshot, cfg, { carry });
    const job = first.jobs.values().next().value!;
    const signature = schedulingSignature(first, job);
    first.close();
    carry.keep(first.jobs, first.nodeByName);
    const next = openSession(snapshot, cfg, { carry });
    expect(next.jobs.get(job.uid)).toBe(job);
    expect(next.memos).not.toBe(first.memos);
    expect(next.memos.lasting).toBe(carry.memos);
    expect(next.memos.lasting.signatures.get(job)?.signature).toBe(signature);
    expect(openSession(snapshot, cfg).memos.lasting).not.toBe(carry.memos);
  });

  it("builds a job anew when its spec is a new object, even with equal content", () => {
    const { snapshot } = generate(3);
    const cfg = config(ACTIONS);
    const carry = new SessionCarry();
    runSession(snapshot, cfg, { carry });
    runSession({ ...snapshot, jobs: snapshot.jobs.map((j) => ({ ...j })) }, cfg, { carry });
    expect(carry.carried).toBe(0);
  });

  it("builds a node anew when its spec is a new object or its pods are not the carried ones", () => {
    const { snapshot } = generate(3);
    const cfg = config(ACTIONS);
    const carry = new SessionCarry();
    runSession(snapshot, cfg, { carry });
    runSession(snapshot, cfg, { carry });
    const kept = carry.carriedNodes;
    expect(kept).toBeGreaterThan(0);
    runSession({ ...snapshot, nodes: snapshot.nodes.map((n) => ({ ...n })) }, cfg, { carry });
    expect(carry.carriedNodes).toBe(0);
    // Every job built anew: no pod on any node is the one the carried node holds.
    runSession(snapshot, cfg, { carry });
    runSession({ ...snapshot, jobs: snapshot.jobs.map((j) => ({ ...j })) }, cfg, { carry });
    const occupied = new Set(
      snapshot.jobs.flatMap((j) => j.pods.filter((p) => p.node && p.status !== "Pending").map((p) => p.node)),
    );
    expect(carry.carriedNodes).toBeLessThanOrEqual(
      snapshot.nodes.filter((n) => !occupied.has(n.name)).length,
    );
  });
});
