// A job (pod group) as the session sees it: pod sets (gangs) arranged in sub-group
// sets, per-status counters kept current as statements move its pods.
import { DEFAULT_SUB_GROUP, type PodInfo } from "./pod-info.js";
import type { PodGroupSpec, PodStatus, TopologyConstraintSpec } from "./spec.js";
import {
  POD_STATUSES,
  STATUS_INDEX,
  isActiveAllocated,
  isActiveUsed,
  isAlive,
  isAllocated,
} from "./status.js";

export const ROOT_SUB_GROUP_SET = "";
/** Shared by every job and pod set without pods (never mutated: replaced on the first pod). */
const NO_PODS: PodInfo[] = [];
/** Jobs with more pod sets than this keep an index of them by name. */
const INDEXED_POD_SETS = 8;

export interface TopologyConstraint {
  topology: string;
  required: string | null;
  preferred: string | null;
}

function constraintOf(t: TopologyConstraintSpec | null | undefined): TopologyConstraint | null {
  if (!t?.topology) return null;
  return { topology: t.topology, required: t.required || null, preferred: t.preferred || null };
}

/** A gang: a set of pods of which at least `minAvailable` must run together. */
export class PodSet {
  /** Set whole on the first pod (see JobInfo.addPod). */
  pods: PodInfo[] = NO_PODS;
  activeAllocated = 0;
  activeUsed = 0;
  alive = 0;
  pending = 0;
  gated = 0;
  parent: SubGroupSet | null = null;

  constructor(
    readonly name: string,
    public minAvailable: number,
    readonly topology: TopologyConstraint | null,
  ) {}

  count(status: PodStatus, delta: number): void {
    if (isActiveAllocated(status)) this.activeAllocated += delta;
    if (isActiveUsed(status)) this.activeUsed += delta;
    if (isAlive(status)) this.alive += delta;
    if (status === "Pending") this.pending += delta;
    else if (status === "Gated") this.gated += delta;
  }

  get isReadyForScheduling(): boolean {
    return this.alive - this.gated >= this.minAvailable;
  }

  get isGangSatisfied(): boolean {
    return this.activeUsed >= this.minAvailable;
  }

  get isElastic(): boolean {
    return this.minAvailable < this.pods.length;
  }
}

/** A node of the sub-group tree: child sets and pod sets, with an optional topology constraint. */
export class SubGroupSet {
  readonly childSets: SubGroupSet[] = [];
  podSets: PodSet[] = [];
  parent: SubGroupSet | null = null;

  constructor(
    readonly name: string,
    readonly topology: TopologyConstraint | null,
  ) {}

  /** Every pod set below this set. */
  allPodSets(): PodSet[] {
    const out = [...this.podSets];
    for (const c of this.childSets) out.push(...c.allPodSets());
    return out;
  }
}

export class JobInfo {
  readonly uid: string;
  readonly name: string;
  readonly namespace: string;
  readonly queue: string;
  readonly priority: number;
  readonly preemptible: boolean;
  readonly createdAt: number;
  readonly spec: PodGroupSpec;
  readonly root: SubGroupSet;
  /** Pod sets in a stable order (name ascending). */
  readonly podSetList: PodSet[];
  /** Pod sets by name, kept only for jobs of many (a short list is searched: most jobs have one). */
  private readonly podSetIndex: Map<string, PodSet> | null;
  /** Set whole on the first pod (see addPod). */
  pods: PodInfo[] = NO_PODS;
  /** Pods per status, indexed by STATUS_INDEX. */
  private readonly statusCount = new Int32Array(POD_STATUSES.length);
  lastStartAt: number | null;
  staleSince: number | null;
  /** Sum of whole requests of pods in an allocated status (KAI's job.Allocated). */
  allocatedGpus = 0;
  allocatedCpu = 0;
  allocatedMemory = 0;
  /** Job-level "why not placed" messages, in the order they were recorded. */
  readonly fitErrors: string[] = [];

  constructor(spec: PodGroupSpec) {
    this.spec = spec;
    this.uid = spec.uid;
    this.name = spec.name;
    this.namespace = spec.namespace;
    this.queue = spec.queue;
    this.priority = spec.priority;
    this.preemptible = spec.preemptible;
    this.createdAt = spec.createdAt;
    this.lastStartAt = spec.lastStartAt;
    this.staleSince = spec.staleSince;
    this.root = new SubGroupSet(ROOT_SUB_GROUP_SET, constraintOf(spec.topology));
    if (spec.subGroups.length === 0) {
      // The common job: one pod set, built without the name index or a sort.
      const ps = new PodSet(DEFAULT_SUB_GROUP, Math.max(spec.minMember, 1), null);
      ps.parent = this.root;
      this.root.podSets = [ps];
      this.podSetList = [ps];
      this.podSetIndex = null;
      return;
    }
    const byName = this.buildSubGroups(spec);
    this.podSetList = [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    this.podSetIndex = this.podSetList.length > INDEXED_POD_SETS ? byName : null;
  }

  /** The pod sets by name, built from the spec's sub-groups. */
  private buildSubGroups(spec: PodGroupSpec): Map<string, PodSet> {
    const podSets = new Map<string, PodSet>();
    const parents = new Set(spec.subGroups.map((g) => g.parent).filter((p): p is string => !!p));
    const sets = new Map<string, SubGroupSet>([[ROOT_SUB_GROUP_SET, this.root]]);
    for (const g of spec.subGroups)
      if (parents.has(g.name)) sets.set(g.name, new SubGroupSet(g.name, constraintOf(g.topology)));
    for (const g of spec.subGroups) {
      const parent = sets.get(g.parent ?? ROOT_SUB_GROUP_SET);
      if (!parent) throw new Error(`job ${spec.name}: sub-group ${g.name} names unknown parent ${g.parent}`);
      const own = sets.get(g.name);
      if (own) {
        own.parent = parent;
        parent.childSets.push(own);
      } else {
        const ps = new PodSet(g.name, Math.max(g.minMember, 1), constraintOf(g.topology));
        ps.parent = parent;
        parent.podSets.push(ps);
        podSets.set(g.name, ps);
      }
    }
    // Pods naming no sub-group form a "default" pod set that needs all of the job's pods (as KAI does).
    if (spec.pods.some((p) => !p.subGroup) && !podSets.has(DEFAULT_SUB_GROUP)) {
      const ps = new PodSet(DEFAULT_SUB_GROUP, Math.max(spec.pods.length, 1), null);
      ps.parent = this.root;
      this.root.podSets.push(ps);
      podSets.set(ps.name, ps);
    }
    return podSets;
  }

  /** The pod set of that name, if the job has one. */
  podSet(name: string): PodSet | undefined {
    if (this.podSetIndex) return this.podSetIndex.get(name);
    for (const ps of this.podSetList) if (ps.name === name) return ps;
    return undefined;
  }

  addPod(pod: PodInfo): void {
    const ps = this.podSet(pod.subGroup);
    if (!ps) throw new Error(`job ${this.name}: pod ${pod.name} names unknown sub-group ${pod.subGroup}`);
    // A list's first item makes it a one-item array: a push onto an empty array reserves room
    // for 17, and a session holds tens of thousands of single-pod jobs.
    if (ps.pods === NO_PODS) ps.pods = [pod];
    else ps.pods.push(pod);
    if (this.pods === NO_PODS) this.pods = [pod];
    else this.pods.push(pod);
    this.countPod(pod, 1);
  }

  podSetOf(pod: PodInfo): PodSet {
    return this.podSet(pod.subGroup)!;
  }

  private countPod(pod: PodInfo, delta: number): void {
    const s = pod.status;
    const i = STATUS_INDEX[s];
    this.statusCount[i] = this.statusCount[i]! + delta;
    this.podSetOf(pod).count(s, delta);
    if (isAllocated(s)) {
      this.allocatedGpus += delta * pod.req.gpus;
      this.allocatedCpu += delta * pod.req.cpu;
      this.allocatedMemory += delta * pod.req.memory;
    }
  }

  /** Move a pod to a new status, keeping every counter current. */
  setPodStatus(pod: PodInfo, status: PodStatus): void {
    this.countPod(pod, -1);
    pod.status = status;
    this.countPod(pod, 1);
  }

  countOf(status: PodStatus): number {
    return this.statusCount[STATUS_INDEX[status]]!;
  }

  /** Pods per status, for the statuses it has. */
  podStatusCounts(): Partial<Record<PodStatus, number>> {
    const counts: Partial<Record<PodStatus, number>> = {};
    for (let i = 0; i < POD_STATUSES.length; i++) {
      const n = this.statusCount[i]!;
      if (n > 0) counts[POD_STATUSES[i]!] = n;
    }
    return counts;
  }

  get numActiveAllocated(): number {
    let n = 0;
    for (const ps of this.podSetList) n += ps.activeAllocated;
    return n;
  }

  get numActiveUsed(): number {
    let n = 0;
    for (const ps of this.podSetList) n += ps.activeUsed;
    return n;
  }

  get numAllocated(): number {
    return (
      this.countOf("Allocated") + this.countOf("Bound") + this.countOf("Binding") + this.countOf("Running")
    );
  }

  /** -1 below the gang minimum in some pod set, 0 exactly at it everywhere, 1 above it somewhere. */
  get gangState(): -1 | 0 | 1 {
    let st: -1 | 0 | 1 = 0;
    for (const ps of this.podSetList) {
      if (ps.activeAllocated < ps.minAvailable) return -1;
      if (ps.activeAllocated > ps.minAvailable) st = 1;
    }
    return st;
  }

  get isReadyForScheduling(): boolean {
    return this.podSetList.every((ps) => ps.isReadyForScheduling);
  }

  get isElastic(): boolean {
    return this.podSetList.some((ps) => ps.isElastic);
  }

  get isGangSatisfied(): boolean {
    return this.podSetList.every((ps) => ps.isGangSatisfied);
  }

  /** Below its minimum while running, and not finishing (KAI: IsStale). */
  get isStale(): boolean {
    if (this.countOf("Succeeded") > 0) return false;
    if (this.numActiveUsed === 0) return false;
    return !this.isGangSatisfied;
  }

  /** Some pod set has a pipelined pod while fewer than its minimum are truly placed. */
  shouldPipelineJob(): boolean {
    for (const ps of this.podSetList) {
      let pipelined = false;
      let allocated = 0;
      for (const p of ps.pods) {
        if (p.status === "Pipelined") pipelined = true;
        else if (isActiveAllocated(p.status)) allocated++;
      }
      if (pipelined && allocated < ps.minAvailable) return true;
    }
    return false;
  }

  hasTasksToAllocate(realAllocation: boolean): boolean {
    for (const p of this.pods) if (p.shouldAllocate(realAllocation)) return true;
    return false;
  }

  addFitError(message: string): void {
    this.fitErrors.push(message);
  }
}
