// Invariants of a full scheduling session (allocate, consolidation, reclaim, preempt,
// stalegangeviction in KAI's order) over seeded random snapshots: nodes never
// over-committed (after every action), gangs whole or untouched, non-preemptible pods
// never evicted, reclaim never taking a queue below its deserved quota, no job evicted
// to place itself, no pod evicted twice from one node or re-placed where it was evicted;
// also over consecutive cycles whose bounded searches go on from their cursors.
import { describe, expect, it } from "vitest";
import { createAction } from "../../src/core/actions/registry.js";
import {
  type ActionName,
  type SchedulerConfig,
  type Session,
  type Snapshot,
  advanceSnapshot,
  isActiveAllocated,
  isActiveUsed,
  openSession,
  sessionResult,
} from "../../src/core/index.js";
import { config } from "./actions/snapshots.js";
import { generate } from "./actions/random-snapshots.js";

const ACTIONS: ActionName[] = ["allocate", "consolidation", "reclaim", "preempt", "stalegangeviction"];
const DISRUPTIVE = new Set<ActionName>(["consolidation", "reclaim", "preempt"]);

function queueGpus(ssn: Session): Map<string, { allocated: number; deserved: number }> {
  const out = new Map<string, { allocated: number; deserved: number }>();
  for (const q of ssn.queueSharesFn?.() ?? [])
    out.set(q.queue, { allocated: q.allocated.gpu, deserved: q.deserved.gpu });
  return out;
}

const HOLDING = new Set(["Running", "Bound", "Binding", "Allocated"]);

/**
 * No node over-committed. Pods that run or will run there (pipelined ones included) fit
 * its allocatable; so do the pods holding resources now (releasing ones included, except
 * a pipelined pod evicted before it ever started). The node's own accounting never goes
 * below zero in idle+releasing, nor in idle except where a pipelined pod was evicted
 * (KAI counts such a pod as releasing what it never held). Shared devices hold at most
 * their memory.
 */
function checkNodes(
  ssn: Session,
  initial: Map<string, { status: string; node: string | null }>,
  label: string,
): void {
  const boundOn = new Map(ssn.binds.map((b) => [b.pod, b.node]));
  const evictedPipelined = new Set<string>();
  for (const n of ssn.nodes) {
    const later = { cpu: 0, memory: 0, gpus: 0, pods: 0 };
    const now = { cpu: 0, memory: 0, gpus: 0, pods: 0 };
    for (const e of n.pods.values()) {
      // The entry's status is the pod's status on this node (a moved pod is Releasing here, Pipelined elsewhere).
      const p = e.pod;
      const status = e.status;
      const add = (t: typeof later) => {
        t.cpu += p.req.cpu;
        t.memory += p.req.memory;
        t.gpus += p.req.kind === "regular" ? p.req.gpuDevices : 0;
        t.pods += 1;
      };
      if (HOLDING.has(status) || status === "Pipelined") add(later);
      // Whether the pod ever held resources on this node (a pipelined pod holds none until it starts).
      const init = initial.get(p.uid)!;
      const heldBefore =
        ((HOLDING.has(init.status) || init.status === "Releasing") && init.node === n.name) ||
        boundOn.get(p.uid) === n.name;
      if (HOLDING.has(status) || (status === "Releasing" && heldBefore)) add(now);
      if (status === "Releasing" && !heldBefore) evictedPipelined.add(n.name);
    }
    const a = n.allocatable;
    for (const [what, cap] of [
      ["cpu", a.cpu],
      ["memory", a.memory],
      ["gpus", a.gpus],
      ["pods", a.pods],
    ] as const) {
      expect(later[what], `${label}: node ${n.name} committed ${what}`).toBeLessThanOrEqual(cap);
      expect(now[what], `${label}: node ${n.name} held ${what}`).toBeLessThanOrEqual(cap);
      const idle = n.idle[what];
      expect(
        idle + n.releasing[what],
        `${label}: node ${n.name} idle+releasing ${what}`,
      ).toBeGreaterThanOrEqual(0);
      if (!evictedPipelined.has(n.name))
        expect(idle, `${label}: node ${n.name} idle ${what}`).toBeGreaterThanOrEqual(0);
    }
    for (const [g, mem] of n.shared.allocatedMemory) {
      const committed = mem - (n.shared.releasingMemory.get(g) ?? 0);
      expect(committed, `${label}: node ${n.name} shared group ${g}`).toBeLessThanOrEqual(n.gpuMemory);
    }
  }
}

/**
 * Right after reclaim: it takes only from queues above their deserved quota (a queue may
 * have grown earlier in the action), and leaves them no lower than one victim's worth
 * below it (KAI checks each victim chunk before taking it). Flat queue trees only, where
 * that check is per leaf queue.
 */
function checkReclaim(
  ssn: Session,
  before: Map<string, { status: string; node: string | null }>,
  queuesBefore: Map<string, { allocated: number; deserved: number }>,
  reclaimEvictions: number,
  label: string,
): number {
  const after = queueGpus(ssn);
  const lost = new Map<string, number>();
  const largest = new Map<string, number>();
  let taken = 0;
  for (const e of ssn.evictions.slice(reclaimEvictions)) {
    const job = ssn.jobs.get(e.job)!;
    const p = job.pods.find((x) => x.uid === e.pod)!;
    if (p.status !== "Releasing") continue; // moved, not taken
    taken++;
    lost.set(job.queue, (lost.get(job.queue) ?? 0) + p.req.gpus);
    const jobTaken = job.pods.filter(
      (x) => x.status === "Releasing" && before.get(x.uid)!.status !== "Releasing",
    );
    const chunk = jobTaken.reduce((sum, x) => sum + x.req.gpus, 0);
    largest.set(job.queue, Math.max(largest.get(job.queue) ?? 0, chunk));
  }
  const gained = new Set(
    [...ssn.binds, ...ssn.pipelines]
      .filter((p) => p.action === "reclaim" && before.get(p.pod)!.status === "Pending")
      .map((p) => ssn.jobs.get(p.job)!.queue),
  );
  for (const [q, gpus] of lost) {
    if (gpus === 0) continue;
    const b = queuesBefore.get(q)!;
    const a = after.get(q)!;
    if (!gained.has(q))
      expect(b.allocated, `${label}: reclaim took from ${q} at or below its deserved`).toBeGreaterThan(
        b.deserved,
      );
    expect(a.allocated, `${label}: reclaim took ${q} far below its deserved`).toBeGreaterThanOrEqual(
      b.deserved + 1 - largest.get(q)!,
    );
  }
  return taken;
}

interface Tally {
  evictions: number;
  reclaimed: number;
}

/** Run every action on a fresh session of `snapshot`, checking the invariants after each and at the end. */
function checkedSession(
  snapshot: Snapshot,
  flat: boolean,
  cfg: SchedulerConfig,
  label: string,
  tally: Tally,
): Session {
  const ssn = openSession(snapshot, cfg);
  const before = new Map<string, { status: string; node: string | null }>();
  for (const j of ssn.jobs.values())
    for (const p of j.pods) before.set(p.uid, { status: p.status, node: p.nodeName });

  for (const a of ACTIONS) {
    const queuesBefore = queueGpus(ssn);
    const evictionsBefore = ssn.evictions.length;
    createAction(a).execute(ssn);
    checkNodes(ssn, before, `${label} after ${a}`);
    if (a === "reclaim" && flat)
      tally.reclaimed += checkReclaim(ssn, before, queuesBefore, evictionsBefore, label);
  }

  // Nobody evicted twice from one node (a moved pod may be evicted again from where it moved);
  // only preemptible pods are taken by the disruptive actions.
  const evicted = ssn.evictions.map((e) => `${e.pod}@${e.node}`);
  expect(new Set(evicted).size, `${label}: duplicate evictions`).toBe(evicted.length);
  tally.evictions += evicted.length;
  for (const e of ssn.evictions) {
    if (!DISRUPTIVE.has(e.action)) continue;
    const job = ssn.jobs.get(e.job)!;
    expect(job.preemptible, `${label}: ${e.action} evicted non-preemptible ${e.pod}`).toBe(true);
    // The job an eviction made room for is never the evicted job itself.
    const preemptor = /for [^\s/]+\/([^\s,]+)/.exec(e.message)?.[1];
    expect(preemptor, `${label}: eviction message names its preemptor`).toBeDefined();
    expect(preemptor, `${label}: ${e.pod} evicted to place its own job`).not.toBe(job.name);
    const placedByAction = [...ssn.binds, ...ssn.pipelines].some(
      (p) => p.action === e.action && ssn.jobs.get(p.job)!.name === preemptor,
    );
    expect(
      placedByAction,
      `${label}: ${e.pod} evicted for ${preemptor}, which ${e.action} did not place`,
    ).toBe(true);
  }

  // Every gang (pod set) is at or above its minimum, fully unplaced, or untouched. As in KAI,
  // pods still releasing count as members until they are gone (a gang that lost pods to
  // one preemptor may still grow in the same session).
  for (const j of ssn.jobs.values()) {
    const touched = j.pods.some(
      (p) => before.get(p.uid)!.status !== p.status || before.get(p.uid)!.node !== p.nodeName,
    );
    if (!touched) continue;
    for (const ps of j.podSetList) {
      const placed = ps.pods.filter((p) => isActiveAllocated(p.status)).length;
      const members = ps.pods.filter((p) => isActiveUsed(p.status)).length;
      expect(
        placed === 0 || members >= ps.minAvailable,
        `${label}: job ${j.name} pod set ${ps.name} has ${placed} placed of minimum ${ps.minAvailable}`,
      ).toBe(true);
    }
  }

  // An evicted pod ends Releasing where it was, or Pipelined elsewhere (moved) — never re-placed where it was.
  const lastEviction = new Map(ssn.evictions.map((e) => [e.pod, e]));
  for (const e of lastEviction.values()) {
    const p = ssn.jobs.get(e.job)!.pods.find((x) => x.uid === e.pod)!;
    if (p.status === "Releasing") expect(p.nodeName, `${label}: ${e.pod}`).toBe(e.node);
    else {
      expect(p.status, `${label}: evicted ${e.pod}`).toBe("Pipelined");
      expect(p.nodeName, `${label}: ${e.pod} moved onto its own node`).not.toBe(e.node);
    }
  }
  return ssn;
}

describe("session invariants over random snapshots", () => {
  // INVARIANT_CASES=50000 for a soak run.
  const CASES = Number(process.env.INVARIANT_CASES ?? 300);
  it(`holds for ${CASES} seeded snapshots`, () => {
    const tally: Tally = { evictions: 0, reclaimed: 0 };
    for (let seed = 1; seed <= CASES; seed++) {
      const { snapshot, flat } = generate(seed);
      checkedSession(snapshot, flat, config(ACTIONS), `seed ${seed}`, tally).close();
    }
    // The generator must actually exercise the disruptive actions.
    expect(tally.evictions).toBeGreaterThan(50);
    expect(tally.reclaimed).toBeGreaterThan(5);
  });

  it("holds over consecutive cycles whose searches are bounded and go on from their cursors", () => {
    // Budgets small enough that searches stop and resume in clusters the cycles between have changed.
    const bounded = config(ACTIONS, { maxScenariosPerJob: 1, maxScenariosPerAction: 3 });
    const tally: Tally = { evictions: 0, reclaimed: 0 };
    let resumed = 0;
    for (let seed = 1; seed <= CASES; seed++) {
      const generated = generate(seed);
      let snapshot = generated.snapshot;
      for (let cycle = 1; cycle <= 4; cycle++) {
        resumed += snapshot.searchCursors?.length ?? 0;
        const ssn = checkedSession(snapshot, generated.flat, bounded, `seed ${seed} cycle ${cycle}`, tally);
        snapshot = advanceSnapshot(snapshot, ssn, sessionResult(ssn), 10_000);
        ssn.close();
      }
    }
    expect(tally.evictions).toBeGreaterThan(50);
    expect(resumed, "cursors handed to later cycles").toBeGreaterThan(50);
  });
});
