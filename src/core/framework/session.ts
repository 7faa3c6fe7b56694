// The session: one scheduling cycle's working state and the plugin bus. Built from a
// snapshot, opened by the configured plugins (each registers its callbacks in
// onSessionOpen), acted on by the configured actions through statements, closed into a
// SessionResult. Nothing here reads a clock or does I/O.
import { JobInfo, type PodSet, type SubGroupSet } from "../api/podgroup-info.js";
import { NodeInfo } from "../api/node-info.js";
import { PodInfo } from "../api/pod-info.js";
import { QueueInfo } from "../api/queue-info.js";
import type { ActionName, Eviction, Placement, QueueShare } from "../api/result.js";
import type { PodGroupSpec, PodStatus, Snapshot, TopologySpec } from "../api/spec.js";
import { isActiveUsed } from "../api/status.js";
import type {
  AttemptNodeScore,
  BindRequestMutateFn,
  CanReclaimFn,
  CompareFn,
  EventHandler,
  GpuOrderFn,
  JobCapacityFn,
  NodeOrderFn,
  NodePreOrderFn,
  PlacementScore,
  PredicateFn,
  PrePredicateFn,
  QueueOrderFn,
  ReclaimMustMoveFn,
  ScenarioValidatorFn,
  SchedulableResult,
  SubGroupTarget,
  SubsetNodesFn,
  TaskOnNodeCapacityFn,
  VictimFilterFn,
} from "./callbacks.js";
import type { SchedulerConfig, SessionParams } from "./config.js";
import { TaskFitErrors } from "./fit-errors.js";
import { SearchCursors } from "./search-cursors.js";
import type { SessionCarry } from "./session-carry.js";
import { NodeOrdering } from "./node-ordering.js";
import type { Scenario } from "./scenario.js";
import { Statement } from "./statement.js";

export interface Plugin {
  readonly name: string;
  onSessionOpen(ssn: Session): void;
  onSessionClose?(ssn: Session): void;
}

export interface Action {
  readonly name: ActionName;
  execute(ssn: Session): void;
}

const byName = <T extends { name: string }>(a: T, b: T) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
const podByName = (a: PodInfo, b: PodInfo) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
const inNameOrder = (pods: readonly PodInfo[]): boolean => {
  for (let i = 1; i < pods.length; i++) if (pods[i - 1]!.name > pods[i]!.name) return false;
  return true;
};
const OK: SchedulableResult = { schedulable: true };
const NO_PODS: PodInfo[] = [];

function newJob(spec: PodGroupSpec): JobInfo {
  const job = new JobInfo(spec);
  for (const p of spec.pods) job.addPod(new PodInfo(p, job.uid));
  return job;
}

export class Session {
  readonly now: number;
  readonly config: SchedulerConfig;
  readonly params: SessionParams;
  /** Nodes in name order. */
  readonly nodes: NodeInfo[];
  readonly nodeByName = new Map<string, NodeInfo>();
  /** Jobs in snapshot order. */
  readonly jobs = new Map<string, JobInfo>();
  readonly queues = new Map<string, QueueInfo>();
  readonly topologies = new Map<string, TopologySpec>();
  readonly plugins: Plugin[] = [];

  // Callback registries (KAI: framework/session_plugins.go).
  readonly jobOrderFns: CompareFn<JobInfo>[] = [];
  readonly taskOrderFns: CompareFn<PodInfo>[] = [];
  readonly podSetOrderFns: CompareFn<PodSet>[] = [];
  readonly subGroupSetOrderFns: CompareFn<SubGroupSet>[] = [];
  readonly queueOrderFns: QueueOrderFn[] = [];
  readonly nodePreOrderFns: NodePreOrderFn[] = [];
  /** Node scores that depend only on the pod's spec and the node's state. */
  readonly nodeOrderFns: NodeOrderFn[] = [];
  readonly attemptNodeOrderFns: AttemptNodeScore[] = [];
  /** The placement strategy's score (nodeplacement), if any. */
  placement: PlacementScore | null = null;
  readonly gpuOrderFns: GpuOrderFn[] = [];
  readonly prePredicateFns: PrePredicateFn[] = [];
  readonly predicateFns: PredicateFn[] = [];
  readonly jobCapacityFns: JobCapacityFn[] = [];
  readonly nonPreemptibleOverQuotaFns: JobCapacityFn[] = [];
  readonly taskOnNodeCapacityFns: TaskOnNodeCapacityFn[] = [];
  readonly canReclaimFns: CanReclaimFn[] = [];
  readonly reclaimVictimFilterFns: VictimFilterFn[] = [];
  readonly preemptVictimFilterFns: VictimFilterFn[] = [];
  readonly reclaimMustMoveFns: ReclaimMustMoveFn[] = [];
  readonly reclaimValidatorFns: ScenarioValidatorFn[] = [];
  readonly preemptValidatorFns: ScenarioValidatorFn[] = [];
  readonly onJobSolutionStartFns: (() => void)[] = [];
  readonly subsetNodesFns: SubsetNodesFn[] = [];
  readonly bindRequestMutateFns: BindRequestMutateFn[] = [];
  readonly preJobAllocationFns: ((job: JobInfo) => void)[] = [];
  readonly eventHandlers: EventHandler[] = [];
  /** Fair shares for the result, provided by the fair-share plugin. */
  queueSharesFn: (() => QueueShare[]) | null = null;

  // Committed decisions, in commit order.
  readonly binds: Placement[] = [];
  readonly pipelines: Placement[] = [];
  readonly evictions: Eviction[] = [];

  /**
   * Pods (bound or pipelined) after which allocate takes no further job (RunOptions.maxPlacements).
   * A job is placed whole: the limit is looked at between jobs.
   */
  placementLimit = Number.POSITIVE_INFINITY;
  /** Set when allocate stopped at the placement limit: the queued jobs it did not get to. The
   * actions after it do not run (they could evict for a job that free room would take). */
  unreached: JobInfo[] | null = null;

  /** Pods placed so far (bound or pipelined). */
  get placements(): number {
    return this.binds.length + this.pipelines.length;
  }

  /** Per job: fit errors of its tasks (KAI: TasksFitErrors). */
  readonly taskFitErrors = new Map<string, Map<string, TaskFitErrors>>();

  readonly ordering: NodeOrdering;
  /** Victim searches stopped by their budget: taken from the snapshot, handed to the result. */
  readonly searchCursors: SearchCursors;
  /** Every node change, in order (node orders catch up from it). */
  readonly nodeChanges: NodeInfo[] = [];
  /** The jobs with a pending pod when the session opened, in snapshot order. */
  private readonly pendingAtOpen: JobInfo[] = [];
  private readonly pendingAtOpenSet = new Set<JobInfo>();
  /** A pod of a job outside `pendingAtOpen` was set Pending since the scheduling run opened. */
  private pendingElsewhere = false;

  /** `carry`: the jobs and nodes of the previous session on the same cluster, used again where untouched. */
  constructor(snapshot: Snapshot, config: SchedulerConfig, carry?: SessionCarry) {
    this.now = snapshot.now;
    this.config = config;
    this.params = config.session;
    this.searchCursors = new SearchCursors(
      snapshot.searchCursors,
      snapshot.now,
      config.session.searchCursorIdleSeconds,
    );
    const specs = [...snapshot.nodes].sort(byName);
    const indexOf = new Map<string, number>();
    for (let i = 0; i < specs.length; i++) indexOf.set(specs[i]!.name, i);
    const log = this.nodeChanges;
    for (const t of snapshot.topologies) this.topologies.set(t.name, t);
    this.buildQueues(snapshot);
    // Placed pods per node (by node index), in snapshot order ("arrival"), then added in name
    // order (ties: snapshot order). A node whose pods arrive exactly as they did for the previous
    // session (the very same objects in the same order) sorts them into the same order: the
    // previous order is used again without sorting.
    const before: (readonly PodInfo[] | undefined)[] = new Array(specs.length);
    if (carry) for (let i = 0; i < specs.length; i++) before[i] = carry.arrivalOn(specs[i]!.name);
    carry?.opening();
    /** The jobs in snapshot order, and those of them built from their specs (not carried). */
    const opened: JobInfo[] = [];
    const built: JobInfo[] = [];
    // Whether the carried jobs come in the order they came in the previous session.
    let keptOrder = true;
    let lastPlace = -1;
    for (const spec of snapshot.jobs) {
      let job = carry?.take(spec) ?? null;
      if (job) {
        if (job.place <= lastPlace) keptOrder = false;
        lastPlace = job.place;
      } else {
        job = newJob(spec);
        built.push(job);
      }
      job.opening = opened.length;
      opened.push(job);
      this.jobs.set(job.uid, job);
      if (job.countOf("Pending") > 0) {
        this.pendingAtOpen.push(job);
        this.pendingAtOpenSet.add(job);
      }
    }
    // Jobs of equal uids (not from a store) leave pods on nodes that no job of the map holds: the
    // next session then visits every pod.
    const unique = this.jobs.size === opened.length;
    const arrivals =
      carry && keptOrder && unique && carry.heldNodes(specs)
        ? this.arrivalsFromCarry(carry, built, before, indexOf)
        : this.arrivalsOfAllPods(opened, before, indexOf, !!carry);
    this.nodes = new Array(specs.length);
    let lastReopened: JobInfo | null = null;
    for (let i = 0; i < specs.length; i++) {
      const arrival = arrivals[i] ?? NO_PODS;
      let pods = arrival.length > 0 && arrival === before[i] ? carry?.podsOn(specs[i]!.name) : undefined;
      if (!pods) pods = inNameOrder(arrival) ? arrival : [...arrival].sort(podByName);
      let node = carry?.takeNode(specs[i]!, pods) ?? null;
      if (!node) {
        node = new NodeInfo(specs[i]!);
        for (const p of pods) {
          if (!carry) {
            node.addTask(p);
            continue;
          }
          // A carried pod still holds what its last node set (JobInfo.renew).
          p.reset();
          node.addTask(p);
          // Accepted on a node built anew: the share may differ from the last open's.
          const job = this.jobs.get(p.jobUid)!;
          if (job !== lastReopened) {
            job.reopened();
            lastReopened = job;
          }
        }
      }
      node.arrival = unique ? arrival : null;
      node.index = i;
      node.opened(pods);
      this.nodes[i] = node;
      this.nodeByName.set(node.name, node);
    }
    for (const n of this.nodes) n.onChange = (x) => log.push(x);
    this.ordering = new NodeOrdering(this);
  }

  /**
   * Every job's placed pods per node, in snapshot order. A node's list that is the previous
   * session's pod for pod is that very list (`before`). `carried`: a pod added to no node has its
   * job reopened (whatever share it was accepted with before, it has none now).
   */
  private arrivalsOfAllPods(
    jobs: readonly JobInfo[],
    before: readonly (readonly PodInfo[] | undefined)[],
    indexOf: ReadonlyMap<string, number>,
    carried: boolean,
  ): (readonly PodInfo[] | undefined)[] {
    // While a node's pods match `before` they are only counted (`matched`); -1 once they
    // differ, and `onNode` holds them.
    const n = before.length;
    const matched = new Int32Array(n);
    const onNode: (PodInfo[] | undefined)[] = new Array(n);
    for (const job of jobs)
      for (const pod of job.pods) {
        if (!pod.nodeName || !isActiveUsed(pod.status)) continue;
        const i = indexOf.get(pod.nodeName);
        if (i === undefined) {
          if (carried) {
            job.reopened();
            pod.reset();
          }
          continue;
        }
        const m = matched[i]!;
        if (m < 0) {
          onNode[i]!.push(pod);
          continue;
        }
        const prev = before[i];
        if (prev && m < prev.length && prev[m] === pod) {
          matched[i] = m + 1;
          continue;
        }
        const list = prev ? prev.slice(0, m) : [];
        list.push(pod);
        onNode[i] = list;
        matched[i] = -1;
      }
    const out: (readonly PodInfo[] | undefined)[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const m = matched[i]!;
      const prev = before[i];
      out[i] = m < 0 ? onNode[i] : m === 0 ? undefined : m === prev!.length ? prev : prev!.slice(0, m);
    }
    return out;
  }

  /**
   * The same lists without visiting the pods of carried jobs, when the nodes are the previous
   * session's (the same names, each with its previous arrival) and the carried jobs come in the
   * same order as then. A carried job's pods are the very objects of the previous session, with
   * the same statuses and nodes (the same specs, untouched), so a node's list changes only where
   * a pod of a job built anew arrives or one of a job not carried again was: only those nodes'
   * lists are made again (their carried pods, still in snapshot order, merged with the new ones
   * by the position of their jobs). A carried pod on a node of no list was on none before either
   * (it holds no share: it was reset, or never added, when it came to be on none).
   */
  private arrivalsFromCarry(
    carry: SessionCarry,
    built: readonly JobInfo[],
    before: readonly (readonly PodInfo[] | undefined)[],
    indexOf: ReadonlyMap<string, number>,
  ): (readonly PodInfo[] | undefined)[] {
    const n = before.length;
    const out: (readonly PodInfo[] | undefined)[] = [...before];
    const position = (pod: PodInfo): number => this.jobs.get(pod.jobUid)!.opening;
    const changed = new Uint8Array(n);
    const added: (PodInfo[] | undefined)[] = new Array(n);
    for (const job of built)
      for (const pod of job.pods) {
        if (!pod.nodeName || !isActiveUsed(pod.status)) continue;
        const i = indexOf.get(pod.nodeName);
        if (i === undefined) continue;
        changed[i] = 1;
        const list = added[i];
        if (list) list.push(pod);
        else added[i] = [pod];
      }
    // A job of the previous session not carried again: its pods were where their specs said
    // when that session opened.
    for (const job of carry.notTaken())
      for (const pod of job.pods) {
        const i = pod.spec.node === null ? undefined : indexOf.get(pod.spec.node);
        if (i !== undefined && isActiveUsed(pod.spec.status)) changed[i] = 1;
      }
    for (let i = 0; i < n; i++) {
      if (!changed[i]) continue;
      const kept: PodInfo[] = [];
      for (const pod of before[i]!) if (carry.took(this.jobs.get(pod.jobUid))) kept.push(pod);
      const more = added[i];
      if (!more) {
        out[i] = kept;
        continue;
      }
      const list: PodInfo[] = [];
      let a = 0;
      let b = 0;
      while (a < kept.length && b < more.length) {
        const ka = position(kept[a]!);
        const kb = position(more[b]!);
        list.push(ka < kb ? kept[a++]! : more[b++]!);
      }
      while (a < kept.length) list.push(kept[a++]!);
      while (b < more.length) list.push(more[b++]!);
      out[i] = list;
    }
    return out;
  }

  /** Link the queue tree; a queue whose parent is missing is dropped with its subtree (as KAI does). */
  private buildQueues(snapshot: Snapshot): void {
    const specs = new Map(snapshot.queues.map((q, i) => [q.name, { q, i }]));
    const alive = (name: string, seen = new Set<string>()): boolean => {
      const e = specs.get(name);
      if (!e || seen.has(name)) return false;
      seen.add(name);
      return e.q.parent === null || alive(e.q.parent, seen);
    };
    for (const [name, { q, i }] of specs) if (alive(name)) this.queues.set(name, new QueueInfo(q, i));
    for (const q of this.queues.values()) if (q.parent) this.queues.get(q.parent)!.children.push(q.name);
  }

  // ---- plugin lifecycle ----------------------------------------------------------------

  open(plugins: Plugin[]): void {
    for (const p of plugins) {
      this.plugins.push(p);
      p.onSessionOpen(this);
    }
  }

  close(): void {
    for (const p of this.plugins) p.onSessionClose?.(this);
  }

  statement(action: ActionName): Statement {
    return new Statement(this, action);
  }

  jobOf(task: PodInfo): JobInfo {
    return this.jobs.get(task.jobUid)!;
  }

  /**
   * The jobs, in snapshot order, among which every job with a pending pod is: the jobs that had
   * one when the session opened (a pod only becomes Pending again in its own job's undoing), or
   * all jobs once a pod of another job was set Pending. For walks that skip jobs without one.
   */
  jobsMaybePending(): Iterable<JobInfo> {
    return this.pendingElsewhere ? this.jobs.values() : this.pendingAtOpen;
  }

  /** A pod of `job` was set Pending (statements tell it; see jobsMaybePending). */
  notePending(job: JobInfo): void {
    if (!this.pendingElsewhere && !this.pendingAtOpenSet.has(job)) this.pendingElsewhere = true;
  }

  fireAllocate(task: PodInfo): void {
    for (const h of this.eventHandlers) h.allocate?.(task);
  }

  fireDeallocate(task: PodInfo): void {
    for (const h of this.eventHandlers) h.deallocate?.(task);
  }

  // ---- orderings -----------------------------------------------------------------------

  /** Negative when `l` goes first. Ties: creation time, then uid. */
  jobOrder(l: JobInfo, r: JobInfo): number {
    for (const f of this.jobOrderFns) {
      const c = f(l, r);
      if (c !== 0) return c;
    }
    if (l.createdAt !== r.createdAt) return l.createdAt < r.createdAt ? -1 : 1;
    return l.uid < r.uid ? -1 : l.uid > r.uid ? 1 : 0;
  }

  taskOrder(l: PodInfo, r: PodInfo): number {
    for (const f of this.taskOrderFns) {
      const c = f(l, r);
      if (c !== 0) return c;
    }
    if (l.createdAt !== r.createdAt) return l.createdAt < r.createdAt ? -1 : 1;
    return l.uid < r.uid ? -1 : l.uid > r.uid ? 1 : 0;
  }

  podSetOrder(l: PodSet, r: PodSet): number {
    for (const f of this.podSetOrderFns) {
      const c = f(l, r);
      if (c !== 0) return c;
    }
    return l.name < r.name ? -1 : l.name > r.name ? 1 : 0;
  }

  subGroupSetOrder(l: SubGroupSet, r: SubGroupSet): number {
    for (const f of this.subGroupSetOrderFns) {
      const c = f(l, r);
      if (c !== 0) return c;
    }
    return l.name < r.name ? -1 : l.name > r.name ? 1 : 0;
  }

  /** True when `lq` goes before `rq`. Without plugins: creation order, then name. */
  queueOrder(
    lq: QueueInfo,
    rq: QueueInfo,
    lJob: JobInfo | null,
    rJob: JobInfo | null,
    lVictims: JobInfo[] | null,
    rVictims: JobInfo[] | null,
  ): boolean {
    for (const f of this.queueOrderFns) {
      const c = f(lq, rq, lJob, rJob, lVictims, rVictims);
      if (c !== 0) return c < 0;
    }
    if (lq.createdAt !== rq.createdAt) return lq.createdAt < rq.createdAt;
    return lq.name < rq.name;
  }

  gpuOrder(task: PodInfo, node: NodeInfo, group: string): number {
    let s = 0;
    for (const f of this.gpuOrderFns) s += f(task, node, group);
    return s;
  }

  // ---- feasibility ---------------------------------------------------------------------

  prePredicate(task: PodInfo, job: JobInfo): string | null {
    for (const f of this.prePredicateFns) {
      const err = f(task, job);
      if (err) return err;
    }
    return null;
  }

  predicate(task: PodInfo, job: JobInfo, node: NodeInfo): string | null {
    for (const f of this.predicateFns) {
      const err = f(task, job, node);
      if (err) return err;
    }
    return null;
  }

  isJobOverQueueCapacity(job: JobInfo, tasks: readonly PodInfo[]): SchedulableResult {
    const f = this.jobCapacityFns[0];
    return f ? f(job, tasks) : OK;
  }

  isNonPreemptibleJobOverQuota(job: JobInfo, tasks: readonly PodInfo[]): SchedulableResult {
    const f = this.nonPreemptibleOverQuotaFns[0];
    return f ? f(job, tasks) : OK;
  }

  isTaskAllocationOnNodeOverCapacity(task: PodInfo, job: JobInfo, node: NodeInfo): SchedulableResult {
    const f = this.taskOnNodeCapacityFns[0];
    return f ? f(task, job, node) : OK;
  }

  canReclaimResources(job: JobInfo): boolean {
    const f = this.canReclaimFns[0];
    return f ? f(job) : false;
  }

  reclaimVictimFilter(preemptor: JobInfo, victim: JobInfo): boolean {
    return this.reclaimVictimFilterFns.every((f) => f(preemptor, victim));
  }

  /** For pruning: no valid reclaim scenario evicting at most `evicted` leaves a pod of `victim` evicted. */
  reclaimVictimMustMove(preemptor: JobInfo, victim: JobInfo, evicted: readonly PodInfo[] | null): boolean {
    return this.reclaimMustMoveFns.some((f) => f(preemptor, victim, evicted));
  }

  preemptVictimFilter(preemptor: JobInfo, victim: JobInfo): boolean {
    return this.preemptVictimFilterFns.every((f) => f(preemptor, victim));
  }

  reclaimScenarioValid(s: Scenario): boolean {
    return this.reclaimValidatorFns.every((f) => f(s));
  }

  preemptScenarioValid(s: Scenario): boolean {
    return this.preemptValidatorFns.every((f) => f(s));
  }

  onJobSolutionStart(): void {
    for (const f of this.onJobSolutionStartFns) f();
  }

  preJobAllocation(job: JobInfo): void {
    for (const f of this.preJobAllocationFns) f(job);
  }

  /** Candidate node sets for a (sub-)group, in the order to try them (topology). */
  subsetNodes(
    job: JobInfo,
    target: SubGroupTarget,
    tasks: readonly PodInfo[],
    nodes: readonly NodeInfo[],
  ): { sets: NodeInfo[][]; error: string | null } {
    let sets: NodeInfo[][] = [nodes as NodeInfo[]];
    for (const f of this.subsetNodesFns) {
      const next: NodeInfo[][] = [];
      for (const s of sets) {
        const r = f(job, target, tasks, s);
        if (r.error) return { sets: [], error: r.error };
        next.push(...r.sets);
      }
      sets = next;
    }
    return { sets, error: null };
  }

  /** The pod whose fit errors were asked for last (a failed scan asks once per node). */
  private lastFitErrors: { job: JobInfo; task: PodInfo; errors: TaskFitErrors } | null = null;

  /** The fit errors recorded for `task` so far (created empty on first use). */
  fitErrorsFor(job: JobInfo, task: PodInfo): TaskFitErrors {
    const last = this.lastFitErrors;
    if (last && last.job === job && last.task === task) return last.errors;
    const errors = this.fitErrorsEntry(job, task);
    this.lastFitErrors = { job, task, errors };
    return errors;
  }

  private fitErrorsEntry(job: JobInfo, task: PodInfo): TaskFitErrors {
    let m = this.taskFitErrors.get(job.uid);
    if (!m) {
      m = new Map();
      this.taskFitErrors.set(job.uid, m);
    }
    let e = m.get(task.uid);
    if (!e) {
      e = new TaskFitErrors(this.nodes.length);
      m.set(task.uid, e);
    }
    return e;
  }

  taskFitErrorsOf(job: JobInfo, task: PodInfo): TaskFitErrors | undefined {
    return this.taskFitErrors.get(job.uid)?.get(task.uid);
  }

  // ---- committed decisions -------------------------------------------------------------

  recordBind(task: PodInfo, node: string, action: ActionName): void {
    this.jobOf(task).setPodStatus(task, "Binding");
    task.isVirtual = false;
    this.binds.push({
      job: task.jobUid,
      pod: task.uid,
      node,
      gpuGroups: [...task.gpuGroups],
      gpuDevices: [...task.gpuDevices],
      action,
    });
  }

  recordPipeline(task: PodInfo, node: string, action: ActionName): void {
    this.pipelines.push({
      job: task.jobUid,
      pod: task.uid,
      node,
      gpuGroups: [...task.gpuGroups],
      gpuDevices: [],
      action,
    });
  }

  /** Drop the pod's placement (bind or pipeline) from the result: a later action took it back. */
  withdrawPlacement(task: PodInfo, placedAs: PodStatus): void {
    const list = placedAs === "Pipelined" ? this.pipelines : this.binds;
    const i = list.findLastIndex((p) => p.pod === task.uid);
    if (i >= 0) list.splice(i, 1);
  }

  recordEviction(task: PodInfo, node: string, action: ActionName, message: string): void {
    this.evictions.push({ job: task.jobUid, pod: task.uid, node, action, message });
  }

  private gpuGroupSeq = 0;

  /**
   * A fresh id for a device newly shared on `node`: the device's index when the node
   * reports its devices, else a name no group on the node has (groups of earlier sessions
   * keep theirs). `taken` are ids already picked for the same pod.
   */
  newGpuGroupId(node: NodeInfo, taken: readonly string[] = []): string {
    const device = node.freeDeviceFor(taken);
    if (device !== null) return device;
    const inUse = (id: string) =>
      taken.includes(id) ||
      node.shared.usedMemory.has(id) ||
      node.shared.allocatedMemory.has(id) ||
      node.shared.releasingMemory.has(id);
    let id: string;
    do {
      this.gpuGroupSeq++;
      id = `${node.name}-gpu-${this.gpuGroupSeq}`;
    } while (inUse(id));
    return id;
  }

  /** Evict at once, outside any action statement (stale gangs). */
  evictNow(task: PodInfo, action: ActionName, message: string): void {
    const st = this.statement(action);
    st.evict(task, message);
    st.commit();
  }
}
