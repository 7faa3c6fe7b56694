// One cluster as an admission pass sees it: its snapshot, what its nodes have free, what waits
// there, and the dry runs that tell whether jobs fit — every fit judged by the real core (allocate
// with the configured plugins), never by totals alone.
import {
  computeFairShare,
  type Placement,
  type PodGroupSpec,
  type QueueShare,
  type QueueSpec,
  type QuotaVector,
  runSession,
  type SchedulerConfig,
  type Snapshot,
  type TopologySpec,
} from "../../src/core/index.js";
import { type AdmissionCandidate, type ClusterSummary, fairShareConfig } from "../../src/store/index.js";
import { admissionDryRunsTotal } from "../metrics.js";
import { type Amounts, add, nodeAmounts, podAmounts, positive, sub, zero } from "./amounts.js";

export interface FitResult {
  fits: boolean;
  /** Why not, in the core's words. */
  fitErrors: string[];
}

const HOLDING = new Set(["Binding", "Running", "Releasing", "Bound", "Allocated"]);

/** A job reduced to the pods that hold node resources: it takes space, asks for nothing. */
function heldOnly(job: PodGroupSpec): PodGroupSpec | null {
  const pods = job.pods.filter((p) => HOLDING.has(p.status));
  if (!pods.length) return null;
  return {
    ...job,
    minMember: pods.length,
    subGroups: [],
    topology: null,
    pods: pods.map((p) => ({ ...p, subGroup: null })),
  };
}

/** The job with the placed pods holding their nodes (status Binding, node and devices set). */
function withPlacements(job: PodGroupSpec, where: ReadonlyMap<string, Placement> | undefined): PodGroupSpec {
  if (!where?.size) return job;
  return {
    ...job,
    pods: job.pods.map((p) => {
      const b = where.get(p.uid);
      if (!b) return p;
      const devices = b.gpuDevices?.length ? { gpuDevices: b.gpuDevices } : {};
      return { ...p, status: "Binding", node: b.node, gpuGroups: b.gpuGroups, ...devices };
    }),
  };
}

/** Per job, where an allocate dry run of the snapshot as it is places its pending pods. */
function reservations(snapshot: Snapshot, config: SchedulerConfig): Map<string, Map<string, Placement>> {
  const out = new Map<string, Map<string, Placement>>();
  if (!snapshot.jobs.some((j) => j.pods.some((p) => p.status === "Pending"))) return out;
  admissionDryRunsTotal.inc({ kind: "reserve" });
  for (const b of runSession(snapshot, config).binds) {
    const m = out.get(b.job) ?? new Map<string, Placement>();
    m.set(b.pod, b);
    out.set(b.job, m);
  }
  return out;
}

function mergeTopologies(...lists: readonly TopologySpec[][]): TopologySpec[] {
  const byName = new Map<string, TopologySpec>();
  for (const list of lists) for (const t of list) byName.set(t.name, t);
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/** A job's shape (what it asks for, not who it is): equal shapes fit empty nodes alike. */
function shapeKey(job: PodGroupSpec): string {
  const pods = job.pods.map((p) => [p.request, p.nodeSelector ?? [], p.gpuModels ?? [], p.subGroup]);
  return JSON.stringify([job.minMember, job.subGroups, job.topology, pods]);
}

const UNLIMITED = (v: QuotaVector) => v.gpu === -1 && v.cpuMillis === -1 && v.memory === -1;

/**
 * What of the job's queue can refuse it on an empty cluster: its queue and every ancestor's
 * limit, and their quota when the job is not preemptible (the core's capacity checks), and
 * whether the queue is a leaf that exists. Empty for an unlimited preemptible job's leaf queue,
 * so jobs of one shape in such queues share one empty-cluster dry run.
 */
function queueKey(queues: ReadonlyMap<string, QueueSpec>, parents: ReadonlySet<string>, job: PodGroupSpec) {
  const parts: unknown[] = parents.has(job.queue) ? ["not a leaf"] : [];
  for (let name: string | null = job.queue; name !== null; ) {
    const q = queues.get(name);
    if (!q) {
      parts.push(["missing", name]);
      break;
    }
    const limit = UNLIMITED(q.limit) ? null : q.limit;
    const quota = job.preemptible || UNLIMITED(q.deserved) ? null : q.deserved;
    if (limit || quota) parts.push([q.name, limit, quota]);
    name = q.parent;
  }
  return JSON.stringify(parts);
}

export class ClusterView {
  readonly name: string;
  readonly labels: Record<string, string>;
  /** Ready nodes' capacity (what fair shares divide). */
  readonly capacity: Amounts;
  /** Free on ready, schedulable nodes now, less what this pass placed here. */
  free: Amounts;
  /** Pending pods already waiting on this cluster, plus what this pass sent here unplaced. */
  backlog: Amounts;
  /** The snapshot's jobs, the pods the cluster would place now as placed (its demand). */
  private readonly present: PodGroupSpec[];
  /** The same reduced to the pods that hold resources. */
  private readonly held: PodGroupSpec[];
  /** Jobs this pass placed here (their placed pods hold their nodes for the rest of the pass). */
  private readonly placed: PodGroupSpec[] = [];
  /** Jobs this pass sent here to wait for room (demand in the fair-share computation). */
  private readonly waiting: PodGroupSpec[] = [];
  /** Per queue: sent here to wait, and placed since the last evaluation (not yet in `shares`). */
  private readonly waitingByQueue = new Map<string, Amounts>();
  private placedSinceEvaluation = new Map<string, Amounts>();
  private readonly emptyFits = new Map<string, FitResult>();
  private readonly queues: ReadonlyMap<string, QueueSpec>;
  /** Queues that have children (not leaves: their jobs are never scheduled). */
  private readonly parents: ReadonlySet<string>;
  private shares = new Map<string, QueueShare>();
  private batch = new Map<string, FitResult>();
  /** The last evaluation's placements, per job. */
  private placements = new Map<string, Placement[]>();

  constructor(
    summary: ClusterSummary,
    readonly snapshot: Snapshot,
    private readonly config: SchedulerConfig,
  ) {
    this.name = summary.name;
    this.labels = summary.labels;
    this.queues = new Map(snapshot.queues.map((q) => [q.name, q]));
    this.parents = new Set(snapshot.queues.flatMap((q) => (q.parent === null ? [] : [q.parent])));
    // Jobs already sent here but not placed yet get their room first: an allocate dry run of the
    // cluster as it is places what its own cycle would place, and those pods then hold their nodes
    // in every later dry run, so no job is told it fits on room they will take.
    const reserved = reservations(snapshot, this.allocateOnly());
    this.present = snapshot.jobs.map((j) => withPlacements(j, reserved.get(j.uid)));
    this.held = this.present.map(heldOnly).filter((j): j is PodGroupSpec => j !== null);
    const usedByNode = new Map<string, Amounts>();
    let backlog = zero();
    for (const job of snapshot.jobs)
      for (const p of job.pods) {
        if (HOLDING.has(p.status) && p.node)
          usedByNode.set(p.node, add(usedByNode.get(p.node) ?? zero(), podAmounts(p)));
        else if (p.status === "Pending") {
          backlog = add(backlog, podAmounts(p));
          // What waits here unplaced counts against its queue's headroom, like what a pass sends.
          if (!reserved.get(job.uid)?.has(p.uid)) this.addWaiting(job.queue, podAmounts(p));
        }
      }
    this.backlog = backlog;
    this.capacity = snapshot.nodes
      .filter((n) => n.ready)
      .map(nodeAmounts)
      .reduce(add, zero());
    this.free = snapshot.nodes
      .filter((n) => n.ready && !n.unschedulable)
      .map((n) => positive(sub(nodeAmounts(n), usedByNode.get(n.name) ?? zero())))
      .reduce(add, zero());
  }

  private addWaiting(queue: string, amounts: Amounts): void {
    this.waitingByQueue.set(queue, add(this.waitingByQueue.get(queue) ?? zero(), amounts));
  }

  private allocateOnly(): SchedulerConfig {
    return { ...this.config, actions: ["allocate"] };
  }

  /**
   * One allocate dry run with every candidate this cluster may take, on its nodes as they are
   * now (pods that hold resources kept, pods that wait left out, what this pass placed here
   * added). A candidate placed here fits even if all the others placed with it come here too:
   * the pass may send any of them. Called again for the candidates still undecided.
   */
  evaluate(candidates: readonly AdmissionCandidate[]): void {
    const jobs = candidates.map((c) => c.spec);
    const topologies = mergeTopologies(this.snapshot.topologies, ...candidates.map((c) => c.topologies));
    admissionDryRunsTotal.inc({ kind: "now" });
    const result = runSession(
      { ...this.snapshot, jobs: [...this.held, ...this.placed, ...jobs], topologies },
      this.allocateOnly(),
    );
    this.placements = new Map();
    for (const b of result.binds) this.placements.set(b.job, [...(this.placements.get(b.job) ?? []), b]);
    const errors = new Map(result.jobs.map((o) => [o.uid, o.fitErrors]));
    this.batch = new Map(
      jobs.map((j) => [j.uid, { fits: this.placements.has(j.uid), fitErrors: errors.get(j.uid) ?? [] }]),
    );
    // Fair shares as if the candidates' demand came here (what waits here counts too).
    const shares = computeFairShare(
      {
        ...this.snapshot,
        jobs: [...this.present, ...this.placed, ...this.waiting, ...jobs],
        topologies,
      },
      fairShareConfig(this.config),
    );
    this.shares = new Map(shares.map((s) => [s.queue, s]));
    this.placedSinceEvaluation = new Map();
  }

  fitsNow(uid: string): FitResult {
    return this.batch.get(uid) ?? { fits: false, fitErrors: ["not evaluated on this cluster"] };
  }

  /** Whether the gang fits this cluster's nodes at all (every node empty). Cached per shape (and
   * per queue only where the queue's limits or quota can refuse it). */
  fitsEmpty(c: AdmissionCandidate): FitResult {
    const key = shapeKey(c.spec) + queueKey(this.queues, this.parents, c.spec);
    let fit = this.emptyFits.get(key);
    if (!fit) {
      admissionDryRunsTotal.inc({ kind: "empty" });
      const result = runSession(
        { ...this.snapshot, jobs: [c.spec], topologies: mergeTopologies(c.topologies) },
        this.allocateOnly(),
      );
      fit = {
        fits: result.binds.some((b) => b.job === c.spec.uid),
        fitErrors: result.jobs.find((o) => o.uid === c.spec.uid)?.fitErrors ?? [],
      };
      this.emptyFits.set(key, fit);
    }
    return fit;
  }

  /** The queue's fair share here less what it holds and what this pass already sent here. */
  headroom(queue: string): Amounts | null {
    const s = this.shares.get(queue);
    if (!s) return null;
    const sent = add(
      this.waitingByQueue.get(queue) ?? zero(),
      this.placedSinceEvaluation.get(queue) ?? zero(),
    );
    return sub(sub(s.fairShare, s.allocated), sent);
  }

  /**
   * Records that a job was sent here: placed now (it fit in the last evaluation; its pods now
   * hold their nodes for the rest of the pass) or to wait for reclaim.
   */
  admit(c: AdmissionCandidate, amounts: Amounts, placedNow: boolean): void {
    const queue = c.spec.queue;
    if (placedNow) {
      const where = new Map((this.placements.get(c.spec.uid) ?? []).map((b) => [b.pod, b]));
      const job = heldOnly(withPlacements(c.spec, where));
      if (job) this.placed.push(job);
      this.placedSinceEvaluation.set(queue, add(this.placedSinceEvaluation.get(queue) ?? zero(), amounts));
      this.free = sub(this.free, amounts);
    } else {
      this.waiting.push(c.spec);
      this.addWaiting(queue, amounts);
      this.backlog = add(this.backlog, amounts);
    }
  }
}
