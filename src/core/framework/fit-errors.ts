// Why a task found no node: per-node reasons, summarised the way KAI words them. The
// reason histogram is kept as nodes are recorded, since thousands of nodes can fail
// for one task and the summary is read on every failed attempt.
import type { PodInfo } from "../api/pod-info.js";
import type { JobInfo } from "../api/podgroup-info.js";

export const RESOURCES_NOT_FOUND = "no nodes with enough resources were found";
export const DEFAULT_POD_ERROR = "Unable to schedule pod";

/** A pod's per-node records, copied (TaskFitErrors.nodeErrors). */
export interface NodeErrors {
  readonly byNode: Uint16Array | Uint32Array | null;
  readonly lists: readonly (readonly string[])[];
  readonly counts: ReadonlyMap<string, number>;
}

export class TaskFitErrors {
  /** A reason that applies to every node (e.g. a pre-predicate), replacing the default message. */
  err: string | null = null;
  /**
   * Node index → which of `lists` holds its short reasons (the last recorded; 0: none). A
   * typed array, as a pod that fits nowhere is recorded on every node of a large cluster.
   */
  private byNode: Uint16Array | Uint32Array | null = null;
  /** `byNode` is also held by a NodeErrors copy: it is copied before the next write. */
  private byNodeShared = false;
  /** The reason lists recorded for this pod, told apart by identity (they are interned). */
  private lists: (readonly string[])[] = [[]];
  private ids = new Map<readonly string[], number>();
  private lastList: readonly string[] | null = null;
  private lastId = 0;
  private counts = new Map<string, number>();

  /** `nodes`: the session's node count (every node index is below it). */
  constructor(private readonly nodes = 0) {}

  setNodeError(nodeIndex: number, reasons: readonly string[]): void {
    const byNode = this.nodeIds(nodeIndex);
    const prev = this.lists[byNode[nodeIndex]!]!;
    if (prev === reasons) return;
    for (const r of prev) this.counts.set(r, this.counts.get(r)! - 1);
    byNode[nodeIndex] = this.idOf(reasons);
    for (const r of reasons) this.counts.set(r, (this.counts.get(r) ?? 0) + 1);
  }

  private idOf(reasons: readonly string[]): number {
    // Consecutive nodes mostly share one list: the last one is checked first.
    if (reasons === this.lastList) return this.lastId;
    let id = this.ids.get(reasons);
    if (id === undefined) {
      id = this.lists.length;
      this.lists.push(reasons);
      this.ids.set(reasons, id);
    }
    this.lastList = reasons;
    this.lastId = id;
    return id;
  }

  /** The node → list array, holding `nodeIndex` (there are never more lists than nodes). */
  private nodeIds(nodeIndex: number): Uint16Array | Uint32Array {
    let ids = this.byNode;
    if (!ids || ids.length <= nodeIndex || this.byNodeShared) {
      const size = Math.max(this.nodes, nodeIndex + 1, ids?.length ?? 0);
      const grown = size < 0xffff ? new Uint16Array(size) : new Uint32Array(size);
      if (ids) grown.set(ids);
      this.byNode = ids = grown;
      this.byNodeShared = false;
    }
    return ids;
  }

  /**
   * A copy of the per-node records (not `err`), for another pod whose scan would record the same.
   * The node array (one entry per node of the session) is shared, never written while shared: the
   * side that writes next copies it first.
   */
  nodeErrors(): NodeErrors {
    this.byNodeShared = this.byNode !== null;
    return { byNode: this.byNode, lists: [...this.lists], counts: new Map(this.counts) };
  }

  /** Take `e` as the per-node records, as a scan recording every node of the session would leave them. */
  setNodeErrors(e: NodeErrors): void {
    this.byNode = e.byNode;
    this.byNodeShared = e.byNode !== null;
    this.lists = [...e.lists];
    this.ids = new Map(this.lists.map((l, i) => [l, i]));
    this.lastList = null;
    this.counts = new Map(e.counts);
  }

  /** "no nodes with enough resources were found: 2 node(s) didn't have enough resources: GPUs." */
  message(): string {
    const hist = [...this.counts]
      .filter(([, n]) => n > 0)
      .map(([r, n]) => `${n} ${r}`)
      .sort();
    let msg = this.err ?? RESOURCES_NOT_FOUND;
    if (hist.length) msg += `: ${hist.join(". \n")}.`;
    return msg;
  }

  /** Reason → number of nodes, for structured "why pending" output. */
  histogram(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [r, n] of this.counts) if (n > 0) out[r] = n;
    return out;
  }
}

/** Per job and task: the task's fit errors (KAI: TasksFitErrors), each created empty on first use. */
export class TasksFitErrors {
  private readonly byJob = new Map<string, Map<string, TaskFitErrors>>();
  /** The pod whose fit errors were asked for last (a failed scan asks once per node). */
  private last: { job: JobInfo; task: PodInfo; errors: TaskFitErrors } | null = null;

  /** `nodes`: the session's node count. */
  constructor(private readonly nodes: number) {}

  of(job: JobInfo, task: PodInfo): TaskFitErrors {
    const last = this.last;
    if (last && last.job === job && last.task === task) return last.errors;
    let m = this.byJob.get(job.uid);
    if (!m) {
      m = new Map();
      this.byJob.set(job.uid, m);
    }
    let errors = m.get(task.uid);
    if (!errors) {
      errors = new TaskFitErrors(this.nodes);
      m.set(task.uid, errors);
    }
    this.last = { job, task, errors };
    return errors;
  }

  /** The fit errors recorded for `task`, if any. */
  get(job: JobInfo, task: PodInfo): TaskFitErrors | undefined {
    return this.byJob.get(job.uid)?.get(task.uid);
  }
}
