// The statement: a transaction over the session. Allocate, pipeline and evict apply
// to the session at once and are recorded; checkpoint/rollback/discard undo them in
// reverse; commit hands them to the session's result in order (KAI: statement.go).
import type { NodeInfo, NodePodEntry } from "../api/node-info.js";
import type { PodInfo } from "../api/pod-info.js";
import type { PodStatus } from "../api/spec.js";
import type { ActionName } from "../api/result.js";
import type { Session } from "./session.js";

type Op =
  | { kind: "allocate"; task: PodInfo; node: string; prevVirtual: boolean; undone: boolean }
  | {
      kind: "pipeline";
      task: PodInfo;
      node: string;
      prevNode: string | null;
      prevStatus: PodStatus;
      prevGroups: string[];
      prevVirtual: boolean;
      /** The task's entry on the node before the pipeline (it was there, being evicted). */
      replaced: NodePodEntry | null;
      /** The replaced entry's resources stay counted (a shared pod moving to another device). */
      replacedKept: boolean;
      undone: boolean;
    }
  | {
      kind: "evict";
      task: PodInfo;
      node: string;
      prevStatus: PodStatus;
      prevGroups: string[];
      prevVirtual: boolean;
      message: string;
      undone: boolean;
    }
  | { kind: "undo"; target: number; undone: boolean };

export type Checkpoint = number;

export class Statement {
  private ops: Op[] = [];

  constructor(
    private readonly ssn: Session,
    readonly action: ActionName,
  ) {}

  checkpoint(): Checkpoint {
    return this.ops.length;
  }

  get operationCount(): number {
    return this.ops.length;
  }

  private node(name: string): NodeInfo {
    const n = this.ssn.nodeByName.get(name);
    if (!n) throw new Error(`statement: unknown node ${name}`);
    return n;
  }

  private job(task: PodInfo) {
    return this.ssn.jobOf(task);
  }

  allocate(task: PodInfo, nodeName: string): void {
    const node = this.node(nodeName);
    this.job(task).setPodStatus(task, "Allocated");
    task.nodeName = nodeName;
    node.addTask(task);
    this.ssn.fireAllocate(task);
    this.ops.push({ kind: "allocate", task, node: nodeName, prevVirtual: task.isVirtual, undone: false });
    task.isVirtual = true;
  }

  private unallocate(task: PodInfo, prevVirtual: boolean): void {
    this.job(task).setPodStatus(task, "Pending");
    if (task.nodeName) this.node(task.nodeName).removeTask(task);
    task.nodeName = null;
    task.isVirtual = prevVirtual;
    this.ssn.fireDeallocate(task);
  }

  /**
   * Place `task` on `nodeName` onto resources being released. When the task is still
   * on that node (it was evicted in this statement) and `updateIfOnNode` is false, the
   * eviction is undone instead.
   */
  pipeline(task: PodInfo, nodeName: string, updateIfOnNode: boolean): void {
    const node = this.node(nodeName);
    const onNode = node.pods.get(task.uid) ?? null;
    const sharedMove =
      onNode !== null &&
      task.gpuGroups.length > 0 &&
      task.isSharedAllocation &&
      !(task.gpuGroups.length === 1 && task.gpuGroups[0] === "-1") &&
      !sameGroups(task.gpuGroups, onNode.gpuGroups);
    if (onNode && !updateIfOnNode && !sharedMove) {
      task.gpuGroups = onNode.gpuGroups;
      this.unevict(task);
      return;
    }
    const prevStatus = task.status;
    this.job(task).setPodStatus(task, "Pipelined");
    const prevNode = task.nodeName;
    task.nodeName = nodeName;
    let prevGroups = task.gpuGroups;
    const prevVirtual = task.isVirtual;
    if (sharedMove && onNode) {
      prevGroups = onNode.gpuGroups;
      node.addTask(task, true);
    } else if (onNode) {
      node.updateTask(task);
    } else {
      node.addTask(task);
    }
    this.ssn.fireAllocate(task);
    this.ops.push({
      kind: "pipeline",
      task,
      node: nodeName,
      prevNode,
      prevStatus,
      prevGroups,
      prevVirtual,
      replaced: onNode,
      replacedKept: sharedMove,
      undone: false,
    });
    task.isVirtual = true;
  }

  private unpipeline(op: Extract<Op, { kind: "pipeline" }>): void {
    const { task } = op;
    this.job(task).setPodStatus(task, op.prevStatus);
    const node = this.node(op.node);
    node.removeTask(task);
    if (op.replaced) {
      // Put back what the node held before; its resources are still counted when the pod moved devices.
      if (op.replacedKept) node.pods.set(task.uid, op.replaced);
      else node.addEntry(op.replaced);
    }
    task.nodeName = op.prevNode;
    task.gpuGroups = op.prevGroups;
    task.isVirtual = op.prevVirtual;
    this.ssn.fireDeallocate(task);
  }

  evict(task: PodInfo, message: string): void {
    if (!task.nodeName) throw new Error(`statement: cannot evict ${task.name}: not on a node`);
    const node = this.node(task.nodeName);
    const op: Op = {
      kind: "evict",
      task,
      node: node.name,
      prevStatus: task.status,
      prevGroups: task.gpuGroups,
      prevVirtual: task.isVirtual,
      message,
      undone: false,
    };
    this.job(task).setPodStatus(task, "Releasing");
    node.updateTask(task);
    this.ssn.fireDeallocate(task);
    this.ops.push(op);
    task.isVirtual = true;
  }

  private unevictOp(op: Extract<Op, { kind: "evict" }>): void {
    const { task } = op;
    this.job(task).setPodStatus(task, op.prevStatus);
    task.gpuGroups = op.prevGroups;
    task.isVirtual = op.prevVirtual;
    const node = this.node(op.node);
    task.nodeName = op.node;
    if (node.pods.has(task.uid)) node.updateTask(task);
    else node.addTask(task);
    this.ssn.fireAllocate(task);
  }

  /** Undo the earliest still-valid eviction of `task` (a victim put back where it was). */
  unevict(task: PodInfo): void {
    for (let i = 0; i < this.ops.length; i++) {
      const op = this.ops[i]!;
      if (op.kind === "evict" && !op.undone && op.task === task) {
        this.undoAt(i);
        return;
      }
    }
    throw new Error(`statement: no eviction of ${task.name} to undo`);
  }

  private reverse(op: Op): void {
    switch (op.kind) {
      case "allocate":
        this.unallocate(op.task, op.prevVirtual);
        break;
      case "pipeline":
        this.unpipeline(op);
        break;
      case "evict":
        this.unevictOp(op);
        break;
      case "undo":
        this.redo(this.ops[op.target]!);
        this.ops[op.target]!.undone = false;
        break;
    }
  }

  /** Re-apply an operation that an undo record had reversed. */
  private redo(op: Op): void {
    const { task } = op as Exclude<Op, { kind: "undo" }>;
    switch (op.kind) {
      case "allocate": {
        this.job(task).setPodStatus(task, "Allocated");
        task.nodeName = op.node;
        this.node(op.node).addTask(task);
        this.ssn.fireAllocate(task);
        task.isVirtual = true;
        break;
      }
      case "evict": {
        op.prevStatus = task.status;
        op.prevGroups = task.gpuGroups;
        op.prevVirtual = task.isVirtual;
        this.job(task).setPodStatus(task, "Releasing");
        this.node(op.node).updateTask(task);
        this.ssn.fireDeallocate(task);
        task.isVirtual = true;
        break;
      }
      default:
        throw new Error(`statement: cannot redo ${op.kind}`);
    }
  }

  private undoAt(i: number): void {
    const op = this.ops[i]!;
    if (op.undone) return;
    this.reverse(op);
    op.undone = true;
    this.ops.push({ kind: "undo", target: i, undone: false });
  }

  rollback(cp: Checkpoint): void {
    if (cp < 0 || cp > this.ops.length) throw new Error(`statement: invalid checkpoint ${cp} of ${this.ops.length}`);
    for (let i = this.ops.length - 1; i >= cp; i--) {
      const op = this.ops[i]!;
      if (!op.undone) this.reverse(op);
    }
    this.ops.length = cp;
  }

  discard(): void {
    this.rollback(0);
  }

  /** Turn the job's allocations in this statement into pipelines (its gang waits for releasing resources). */
  convertAllAllocatedToPipelined(jobUid: string): void {
    const allocs = this.ops.filter(
      (op): op is Extract<Op, { kind: "allocate" }> => op.kind === "allocate" && op.task.jobUid === jobUid,
    );
    for (const op of allocs) {
      const node = op.task.nodeName!;
      this.unallocate(op.task, true);
      this.pipeline(op.task, node, true);
    }
    this.ops = this.ops.filter((op) => !(op.kind === "allocate" && op.task.jobUid === jobUid));
  }

  /** Hand the valid operations, in order, to the session's result. */
  commit(): void {
    for (const op of this.ops) {
      if (op.undone) continue;
      switch (op.kind) {
        case "evict":
          this.ssn.recordEviction(op.task, op.node, this.action, op.message);
          op.task.isVirtual = false;
          break;
        case "pipeline":
          this.ssn.recordPipeline(op.task, op.node, this.action);
          break;
        case "allocate":
          this.ssn.recordBind(op.task, op.node, this.action);
          break;
        case "undo":
          break;
      }
    }
    this.ops = [];
  }

  /** The tasks this statement evicted and did not undo (the victims), in eviction order. */
  evictedTasks(): PodInfo[] {
    const out: PodInfo[] = [];
    for (const op of this.ops) if (op.kind === "evict" && !op.undone) out.push(op.task);
    return out;
  }

  /** The tasks this statement pipelined (valid operations), in order. */
  pipelinedTasks(): PodInfo[] {
    const out: PodInfo[] = [];
    for (const op of this.ops) if (op.kind === "pipeline" && !op.undone) out.push(op.task);
    return out;
  }
}

function sameGroups(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((g, i) => g === b[i]);
}
