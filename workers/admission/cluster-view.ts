// One cluster as admission sees it: what its nodes have free, what waits there, and the dry runs
// that tell whether jobs fit — every fit judged by the real core (allocate with the configured
// plugins), never by totals alone. A ClusterBase is what is kept of a cluster between passes
// (rebuilt when the cluster changes); a ClusterView is one pass's look at it, carrying what the
// pass sent there.
import {
  computeFairShare,
  type Placement,
  type PodGroupSpec,
  type QueueShare,
  type QueueSpec,
  type QuotaVector,
  runSession,
  type SchedulerConfig,
  SessionCarry,
  type Snapshot,
  type TopologySpec,
} from "../../src/core/index.js";
import { fairShareConfig } from "../../src/fair-share/fair-share.js";
import type { AdmissionCandidate, ClusterPodPolicy, ClusterSummary } from "../../src/store/index.js";
import { type Amounts, add, anyAbove, type NodeRoom, podAmounts, sub, within, zero } from "./amounts.js";
import {
  allocateOnly,
  type ClusterDigest,
  digestCluster,
  heldOnly,
  withPlacements,
} from "./cluster-digest.js";
import { compactHeld, HELD_JOB } from "./compact.js";

export interface FitResult {
  fits: boolean;
  /** Why not, in the core's words. */
  fitErrors: string[];
}

export function mergeTopologies(...lists: readonly TopologySpec[][]): TopologySpec[] {
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

/** The key of a job's empty-cluster answer on a base (see `fitsEmpty`). */
const emptyKey = (base: ClusterBase, job: PodGroupSpec) =>
  shapeKey(job) + queueKey(base.queues, base.parents, job);

/** Fair-share sessions of at most this many candidates take the base's share carry. */
const SHARE_CARRY_MAX_CANDIDATES = 16;

/**
 * What admission keeps of a cluster between passes: its digest as it came, the lookups over it
 * built once, and the answers and session carries that hold as long as the digest does.
 */
export class ClusterBase {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly podPolicy: ClusterPodPolicy;
  /** The queues as configured, nothing held (for the empty-cluster check). */
  readonly queues: ReadonlyMap<string, QueueSpec>;
  /** Queues that have children (not leaves: their jobs are never scheduled). */
  readonly parents: ReadonlySet<string>;
  /** Per queue: what waits here that the cluster cannot place now. */
  readonly waitingByQueue: ReadonlyMap<string, Amounts>;
  private readonly unclaimedByNode: ReadonlyMap<string, NodeRoom>;
  private readonly queueDemand: ReadonlyMap<string, Amounts>;
  private readonly fingerprint: string;

  readonly emptyFits = new Map<string, FitResult>();
  /** The jobs the last dry run on `compact` built (the per-node pods' job above all, and the
   * candidates it left untouched): the next dry run takes them instead of building them again. */
  readonly carry = new SessionCarry();
  /** The same for the fair-share sessions of a few candidates, whose other jobs are `shareJobs`
   * and `pending` each time. */
  readonly shareCarry = new SessionCarry();

  constructor(
    summary: ClusterSummary,
    readonly digest: ClusterDigest,
    readonly config: SchedulerConfig,
  ) {
    this.name = summary.name;
    this.labels = summary.labels;
    this.podPolicy = summary.podPolicy;
    this.queues = new Map(digest.shell.queues.map((q) => [q.name, q]));
    this.parents = new Set(digest.shell.queues.flatMap((q) => (q.parent === null ? [] : [q.parent])));
    this.waitingByQueue = new Map(digest.waitingByQueue);
    this.unclaimedByNode = new Map(digest.unclaimedByNode);
    this.queueDemand = new Map(digest.queueDemand);
    this.fingerprint = JSON.stringify([summary.labels, digest.fingerprint]);
  }

  /** The base of a snapshot read here (no owner computed its digest). */
  static of(summary: ClusterSummary, snapshot: Snapshot, config: SchedulerConfig): ClusterBase {
    return new ClusterBase(summary, digestCluster(snapshot, config), config);
  }

  /** The nodes with what holds resources there compacted: every dry run starts from it. */
  get compact(): Snapshot {
    return this.digest.compact;
  }

  /** The pods that wait and that the cluster cannot place now (demand for fair shares). */
  get pending(): PodGroupSpec[] {
    return this.digest.pending;
  }

  /** The compacted jobs that count for queues (the per-node pods count through the queues). */
  get queueJobs(): PodGroupSpec[] {
    return this.digest.compact.jobs.filter((j) => j.uid !== HELD_JOB);
  }

  /** Takes over the empty-cluster answers of an earlier base of the same nodes and queues. */
  keepEmptyFits(before: ClusterBase): void {
    if (before.fingerprint !== this.fingerprint) return;
    for (const [k, v] of before.emptyFits) this.emptyFits.set(k, v);
  }

  /**
   * Whether this base may take a job `before` could not: a node with more room in anything, a
   * node, label or queue setting changed, or a queue asking for less here (fair shares of the
   * others grow). Pods placed and jobs sent here only take room and add demand.
   */
  mayHaveMoreRoomThan(before: ClusterBase): boolean {
    if (before.fingerprint !== this.fingerprint) return true;
    for (const [node, now] of this.unclaimedByNode) {
      const was = before.unclaimedByNode.get(node);
      if (!was || now.pods > was.pods || anyAbove(now, was)) return true;
    }
    for (const [queue, was] of before.queueDemand) {
      const now = this.queueDemand.get(queue);
      if (!now || anyAbove(was, now)) return true;
    }
    return false;
  }
}

/** Dry runs of the core a view ran, by kind (the metrics' labels). */
export interface DryRunCounts {
  now: number;
  empty: number;
}

/** One pass's look at a cluster: its base and what this pass sent there. */
export class ClusterView {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly capacity: Amounts;
  /** Free on ready, schedulable nodes, waiting pods taking nothing, less what this pass placed or offered here. */
  unheld: Amounts;
  /** `unheld` less what the pods the cluster would place now will take: the room a new job can get now. */
  unclaimed: Amounts;
  /** Pending pods already waiting on this cluster, plus what this pass sent here unplaced. */
  backlog: Amounts;
  /** Jobs this pass placed here (their placed pods hold their nodes for the rest of the pass). */
  private readonly placed: PodGroupSpec[] = [];
  /** Jobs this pass sent here to wait for room (demand in the fair-share computation). */
  private readonly waiting: PodGroupSpec[] = [];
  /** Per queue: what waits here, and placed since the last evaluation (not yet in `shares`). */
  private readonly waitingByQueue: Map<string, Amounts>;
  private placedSinceEvaluation = new Map<string, Amounts>();
  private shares = new Map<string, QueueShare>();
  private batch = new Map<string, FitResult>();
  /** The last evaluation's placements, per job. */
  private placements = new Map<string, Placement[]>();
  /** What `offer` changed, to put back before the offered jobs' dry run. */
  private beforeOffers: { unheld: Amounts; unclaimed: Amounts; placed: Map<string, Amounts> } | null = null;
  private dryRuns: DryRunCounts = { now: 0, empty: 0 };

  constructor(readonly base: ClusterBase) {
    this.name = base.name;
    this.labels = base.labels;
    this.capacity = base.digest.capacity;
    this.unheld = base.digest.unheld;
    this.unclaimed = base.digest.unclaimed;
    this.backlog = base.digest.backlog;
    this.waitingByQueue = new Map(base.waitingByQueue);
  }

  /** The dry runs since the last call. */
  takeDryRuns(): DryRunCounts {
    const counts = this.dryRuns;
    this.dryRuns = { now: 0, empty: 0 };
    return counts;
  }

  /**
   * Counts a job as placed here for the scores and the room that later offers of the same
   * round see, before any dry run says whether it fits; `withdrawOffers` puts all that back.
   */
  offer(c: AdmissionCandidate, amounts: Amounts): void {
    this.beforeOffers ??= {
      unheld: this.unheld,
      unclaimed: this.unclaimed,
      placed: new Map(this.placedSinceEvaluation),
    };
    this.countPlaced(c.spec.queue, amounts);
  }

  withdrawOffers(): void {
    const b = this.beforeOffers;
    if (!b) return;
    this.unheld = b.unheld;
    this.unclaimed = b.unclaimed;
    this.placedSinceEvaluation = b.placed;
    this.beforeOffers = null;
  }

  /**
   * One allocate dry run with every candidate this cluster may take, on its nodes as they are
   * now (pods that hold resources kept, pods the cluster would place now placed, what this pass
   * placed here added). A candidate placed here fits even if all the others placed with it come
   * here too: the pass may send any of them. Called again for the candidates still undecided.
   */
  evaluate(candidates: readonly AdmissionCandidate[], opts: { shares?: boolean } = {}): void {
    const jobs = candidates.map((c) => c.spec);
    if (!jobs.length) {
      this.placements = new Map();
      this.batch = new Map();
      return;
    }
    const compact = this.base.compact;
    const topologies = mergeTopologies(compact.topologies, ...candidates.map((c) => c.topologies));
    this.dryRuns.now++;
    const result = runSession(
      { ...compact, jobs: [...compact.jobs, ...this.placed, ...jobs], topologies },
      allocateOnly(this.base.config),
      { carry: this.base.carry },
    );
    this.placements = new Map();
    for (const b of result.binds) this.placements.set(b.job, [...(this.placements.get(b.job) ?? []), b]);
    const errors = new Map(result.jobs.map((o) => [o.uid, o.fitErrors]));
    this.batch = new Map(
      jobs.map((j) => [j.uid, { fits: this.placements.has(j.uid), fitErrors: errors.get(j.uid) ?? [] }]),
    );
    if (opts.shares !== false) this.evaluateShares(candidates);
  }

  /** Fair shares as if the candidates' demand came here (what waits here counts too). */
  evaluateShares(candidates: readonly AdmissionCandidate[]): void {
    const base = this.base;
    const digest = base.digest;
    const jobs = candidates.map((c) => c.spec);
    // What this pass placed here counts for its queues like what the cluster would place now.
    let queues = digest.shareQueues;
    let placed: PodGroupSpec[] = [];
    if (this.placed.length) {
      const folded = compactHeld({ ...digest.compact, queues, jobs: this.placed }, this.placed);
      queues = folded.queues;
      placed = folded.jobs.filter((j) => j.uid !== HELD_JOB);
    }
    // With no pod holding a node in it, the fair-share session needs only the total capacity.
    const nodes = digest.shareJobs.length || placed.length ? digest.compact.nodes : [digest.capacityNode];
    const shares = computeFairShare(
      {
        ...digest.compact,
        nodes,
        queues,
        jobs: [...digest.shareJobs, ...digest.pending, ...placed, ...this.waiting, ...jobs],
        topologies: mergeTopologies(digest.compact.topologies, ...candidates.map((c) => c.topologies)),
      },
      fairShareConfig(base.config),
      // With many candidates, building them dominates, and the carry would keep them all until
      // the next session (more to collect than it saves): only small batches take it.
      candidates.length <= SHARE_CARRY_MAX_CANDIDATES ? { carry: base.shareCarry } : {},
    );
    this.shares = new Map(shares.map((s) => [s.queue, s]));
    this.placedSinceEvaluation = new Map();
  }

  fitsNow(uid: string): FitResult {
    return this.batch.get(uid) ?? { fits: false, fitErrors: ["not evaluated on this cluster"] };
  }

  /** Whether the gang may fit this cluster's nodes at all, as far as is known without a dry run:
   * the empty-cluster answer when one is cached, else whether each of its pods is within the
   * largest node in every resource. */
  mayFitEmpty(c: AdmissionCandidate): boolean {
    const base = this.base;
    const known = base.emptyFits.get(emptyKey(base, c.spec));
    if (known) return known.fits;
    const largest = base.digest.largestNode;
    return c.spec.pods.every((p) => within(podAmounts(p), largest));
  }

  /** Whether the gang fits this cluster's nodes at all (every node empty). Cached per shape (and
   * per queue only where the queue's limits or quota can refuse it). */
  fitsEmpty(c: AdmissionCandidate): FitResult {
    const base = this.base;
    const key = emptyKey(base, c.spec);
    let fit = base.emptyFits.get(key);
    if (!fit) {
      this.dryRuns.empty++;
      const result = runSession(
        { ...base.digest.shell, jobs: [c.spec], topologies: mergeTopologies(c.topologies) },
        allocateOnly(base.config),
      );
      fit = {
        fits: result.binds.some((b) => b.job === c.spec.uid),
        fitErrors: result.jobs.find((o) => o.uid === c.spec.uid)?.fitErrors ?? [],
      };
      base.emptyFits.set(key, fit);
    }
    return fit;
  }

  /** The queue's fair share here less what it holds, what waits here and what this pass sent. */
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
      this.countPlaced(queue, amounts);
    } else {
      this.waiting.push(c.spec);
      this.waitingByQueue.set(queue, add(this.waitingByQueue.get(queue) ?? zero(), amounts));
      this.backlog = add(this.backlog, amounts);
    }
  }

  /** What a job placed (or offered) here takes: from the room, and for its queue's headroom. */
  private countPlaced(queue: string, amounts: Amounts): void {
    this.placedSinceEvaluation.set(queue, add(this.placedSinceEvaluation.get(queue) ?? zero(), amounts));
    this.unheld = sub(this.unheld, amounts);
    this.unclaimed = sub(this.unclaimed, amounts);
  }
}
