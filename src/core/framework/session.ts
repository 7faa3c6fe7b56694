// The session: one scheduling cycle's working state and the plugin bus. Built from a
// snapshot (its jobs and nodes by carry/build.ts), opened by the configured plugins (each
// registers its callbacks in onSessionOpen), acted on by the configured actions through
// statements, closed into a SessionResult. Nothing here reads a clock or does I/O.
import type { NodeInfo } from "../api/node-info.js";
import type { PodInfo } from "../api/pod-info.js";
import type { JobInfo, PodSet, SubGroupSet } from "../api/podgroup-info.js";
import { QueueInfo } from "../api/queue-info.js";
import type { ActionName, Eviction, Placement, QueueShare } from "../api/result.js";
import type { PodStatus, Snapshot, TopologySpec } from "../api/spec.js";
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
import { buildSession } from "./carry/build.js";
import type { SessionCarry } from "./carry/session-carry.js";
import type { SchedulerConfig, SessionParams } from "./config.js";
import { type TaskFitErrors, TasksFitErrors } from "./fit-errors.js";
import { LastingMemos, SessionMemos } from "./memo.js";
import { SearchCursors } from "./search-cursors.js";
import { NodeOrdering } from "./node-ordering.js";
import { PendingJobs } from "./pending-jobs.js";
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

const OK: SchedulableResult = { schedulable: true };

export class Session {
  readonly now: number;
  readonly config: SchedulerConfig;
  readonly params: SessionParams;
  /** Nodes in name order. */
  readonly nodes: NodeInfo[];
  readonly nodeByName = new Map<string, NodeInfo>();
  /** Jobs in snapshot order. */
  readonly jobs: Map<string, JobInfo>;
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

  /** Per job: fit errors of its tasks. */
  private readonly fitErrors: TasksFitErrors;

  readonly ordering: NodeOrdering;
  /** Victim searches stopped by their budget: taken from the snapshot, handed to the result. */
  readonly searchCursors: SearchCursors;
  /** Every node change, in order (node orders catch up from it). */
  readonly nodeChanges: NodeInfo[] = [];
  /** Which jobs may hold a pending pod (see jobsMaybePending). */
  private readonly pending: PendingJobs;

  /** The carry the session was opened with: the previous session's jobs and nodes on the same
   * cluster, used again where untouched (and what a plugin kept with them at open). */
  readonly carry: SessionCarry | null;
  /** What the session remembers of its computations; what outlives it is the carry's. */
  readonly memos: SessionMemos;

  constructor(snapshot: Snapshot, config: SchedulerConfig, carry?: SessionCarry) {
    this.now = snapshot.now;
    this.config = config;
    this.params = config.session;
    this.carry = carry ?? null;
    this.memos = new SessionMemos(carry?.memos ?? new LastingMemos());
    this.searchCursors = new SearchCursors(
      snapshot.searchCursors,
      snapshot.now,
      config.session.searchCursorIdleSeconds,
    );
    for (const t of snapshot.topologies) this.topologies.set(t.name, t);
    this.buildQueues(snapshot);
    const built = buildSession(snapshot, this.carry);
    this.jobs = built.jobs;
    this.pending = new PendingJobs(built.opened, this.jobs);
    this.nodes = built.nodes;
    const log = this.nodeChanges;
    for (let i = 0; i < this.nodes.length; i++) {
      const node = this.nodes[i]!;
      node.index = i;
      node.onChange = (x) => log.push(x);
      this.nodeByName.set(node.name, node);
    }
    this.fitErrors = new TasksFitErrors(this.nodes.length);
    this.ordering = new NodeOrdering(this);
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

  /** The jobs, in snapshot order, among which every job with a pending pod is (see PendingJobs). */
  jobsMaybePending(): Iterable<JobInfo> {
    return this.pending.maybePending();
  }

  /** A pod of `job` was set Pending (statements tell it; see jobsMaybePending). */
  notePending(job: JobInfo): void {
    this.pending.note(job);
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

  /** The fit errors recorded for `task` so far (created empty on first use). */
  fitErrorsFor(job: JobInfo, task: PodInfo): TaskFitErrors {
    return this.fitErrors.of(job, task);
  }

  taskFitErrorsOf(job: JobInfo, task: PodInfo): TaskFitErrors | undefined {
    return this.fitErrors.get(job, task);
  }

  /** Moves a pod to a new status: its job's counters and its revision (memos.ts) follow. */
  setPodStatus(task: PodInfo, status: PodStatus, job: JobInfo = this.jobOf(task)): void {
    job.setPodStatus(task, status);
    this.memos.lasting.touch(job);
  }

  // ---- committed decisions -------------------------------------------------------------

  recordBind(task: PodInfo, node: string, action: ActionName): void {
    this.setPodStatus(task, "Binding");
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
