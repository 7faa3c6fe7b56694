// The statement: a transaction over the session. Allocate, pipeline and evict apply
// to the session at once and are recorded; checkpoint/rollback/discard undo them in
// reverse; commit hands them to the session's result in order (KAI: statement.go).
//
// Each operation keeps the node state it changed, so a rollback puts nodes back exactly
// (KAI's shared-GPU accounting is not always its own inverse). Only the out-of-order
// undo of an eviction — a victim put back where it was — goes through the accounting,
// as in KAI.
//
// Evicting a pod this session placed (allocated, bound or pipelined) on a node other than
// the snapshot's withdraws the placement instead (beyond KAI, which makes it Releasing on a node it never reached and
// so counts its resources twice): the node forgets it, the pod is again what it was
// before — Pending, or Releasing from where it runs — and the result keeps neither the
// placement nor an eviction.
import type { NodeInfo, NodeState } from "../api/node-info.js";
import type { PodInfo } from "../api/pod-info.js";
import type { ActionName } from "../api/result.js";
import type { PodStatus } from "../api/spec.js";
import type { Session } from "./session.js";

interface TaskFields {
  status: PodStatus;
  nodeName: string | null;
  gpuGroups: string[];
  gpuDevices: number[];
  isVirtual: boolean;
}

type Op =
  | { kind: "allocate"; task: PodInfo; node: string; before: NodeState; prev: TaskFields; undone: boolean }
  | { kind: "pipeline"; task: PodInfo; node: string; before: NodeState; prev: TaskFields; undone: boolean }
  /** A session-made placement taken back (the pod was chosen as a victim where it was placed). */
  | { kind: "withdraw"; task: PodInfo; node: string; before: NodeState; prev: TaskFields; undone: boolean }
  /** `before` is null for a pod on a node the snapshot does not hold (gone from its cluster). */
  | {
      kind: "evict";
      task: PodInfo;
      node: string;
      before: NodeState | null;
      prev: TaskFields;
      message: string;
      undone: boolean;
    }
  /** An eviction undone out of order; reversing it evicts again. */
  | {
      kind: "undo";
      task: PodInfo;
      target: number;
      node: string;
      before: NodeState | null;
      prev: TaskFields;
      undone: boolean;
    };

export type Checkpoint = number;

function fieldsOf(t: PodInfo): TaskFields {
  return {
    status: t.status,
    nodeName: t.nodeName,
    gpuGroups: t.gpuGroups,
    gpuDevices: t.gpuDevices,
    isVirtual: t.isVirtual,
  };
}

/**
 * Placed by this session (allocated, bound or pipelined) on a node other than the one the
 * snapshot has it on. (A pod re-placed on its own node — a shared pod moving to another
 * device there — is evicted the KAI way: its old device is still counted on that node.)
 */
function placedBySession(task: PodInfo): boolean {
  return (
    (task.status === "Allocated" || task.status === "Binding" || task.status === "Pipelined") &&
    task.spec.node !== task.nodeName
  );
}

function sameGroups(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((g, i) => g === b[i]);
}

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

  private setFields(task: PodInfo, f: TaskFields): void {
    const job = this.ssn.jobOf(task);
    this.ssn.setPodStatus(task, f.status, job);
    if (f.status === "Pending") this.ssn.notePending(job);
    task.nodeName = f.nodeName;
    task.gpuGroups = f.gpuGroups;
    task.gpuDevices = f.gpuDevices;
    task.isVirtual = f.isVirtual;
  }

  /** Place `task` on `nodeName` (on `gpuGroups`, for a shared-GPU task). */
  allocate(task: PodInfo, nodeName: string, gpuGroups: string[] = task.gpuGroups): void {
    const node = this.node(nodeName);
    const op: Op = {
      kind: "allocate",
      task,
      node: nodeName,
      before: node.capture(task),
      prev: fieldsOf(task),
      undone: false,
    };
    task.gpuGroups = gpuGroups;
    this.ssn.setPodStatus(task, "Allocated");
    task.nodeName = nodeName;
    node.addTask(task);
    this.ssn.fireAllocate(task);
    this.ops.push(op);
    task.isVirtual = true;
  }

  /**
   * Place `task` on `nodeName` onto resources being released. When the task is still
   * on that node (it was evicted in this statement) and `updateIfOnNode` is false, the
   * eviction is undone instead.
   */
  pipeline(
    task: PodInfo,
    nodeName: string,
    updateIfOnNode: boolean,
    gpuGroups: string[] = task.gpuGroups,
  ): void {
    const node = this.node(nodeName);
    const onNode = node.pods.get(task.uid) ?? null;
    const sharedMove =
      onNode !== null &&
      gpuGroups.length > 0 &&
      task.isSharedAllocation &&
      !(gpuGroups.length === 1 && gpuGroups[0] === "-1") &&
      !sameGroups(gpuGroups, onNode.gpuGroups);
    // Only an eviction of this statement can be undone; one an earlier action committed
    // (or a withdrawn move back to where the pod runs) is pipelined like any other.
    const open = onNode && !updateIfOnNode && !sharedMove ? this.openEviction(task) : -1;
    if (open >= 0) {
      task.gpuGroups = onNode!.gpuGroups;
      this.unevict(task, open);
      return;
    }
    const op: Op = {
      kind: "pipeline",
      task,
      node: nodeName,
      before: node.capture(task),
      prev: fieldsOf(task),
      undone: false,
    };
    task.gpuGroups = gpuGroups;
    this.ssn.setPodStatus(task, "Pipelined");
    task.nodeName = nodeName;
    // A shared pod moving to another device of the same node stays counted on the old one until it leaves it.
    if (sharedMove) node.addTask(task, true);
    else if (onNode) node.updateTask(task);
    else node.addTask(task);
    this.ssn.fireAllocate(task);
    this.ops.push(op);
    task.isVirtual = true;
  }

  evict(task: PodInfo, message: string): void {
    if (!task.nodeName) throw new Error(`statement: cannot evict ${task.name}: not on a node`);
    if (placedBySession(task)) {
      this.withdraw(task);
      return;
    }
    // A pod can run on a node its cluster no longer reports (a node removed while its pods are
    // still reported): it is evicted all the same, with no node to account it on (as in KAI).
    const node = this.ssn.nodeByName.get(task.nodeName) ?? null;
    const op: Op = {
      kind: "evict",
      task,
      node: task.nodeName,
      before: node?.capture(task) ?? null,
      prev: fieldsOf(task),
      message,
      undone: false,
    };
    this.ssn.setPodStatus(task, "Releasing");
    node?.updateTask(task);
    this.ssn.fireDeallocate(task);
    this.ops.push(op);
    task.isVirtual = true;
  }

  /** Take back a placement this session made: the pod returns to where it is in the cluster. */
  private withdraw(task: PodInfo): void {
    const node = this.node(task.nodeName!);
    const op: Op = {
      kind: "withdraw",
      task,
      node: node.name,
      before: node.capture(task),
      prev: fieldsOf(task),
      undone: false,
    };
    node.removeTask(task);
    const from = task.spec.node;
    // Running elsewhere (a moved victim): Releasing there, as its eviction left it.
    if (from && this.ssn.nodeByName.has(from) && task.spec.status !== "Pending") {
      this.ssn.setPodStatus(task, "Releasing");
      task.nodeName = from;
      task.gpuGroups = [...task.spec.gpuGroups];
    } else {
      this.ssn.setPodStatus(task, "Pending");
      this.ssn.notePending(this.ssn.jobOf(task));
      task.nodeName = null;
      task.gpuGroups = [];
    }
    this.ssn.fireDeallocate(task);
    this.ops.push(op);
    task.isVirtual = true;
  }

  /** Where the earliest still-valid eviction of `task` is in the ops (-1: none). */
  private openEviction(task: PodInfo): number {
    return this.ops.findIndex((op) => op.kind === "evict" && !op.undone && op.task === task);
  }

  /** Undo the earliest still-valid eviction of `task` (a victim put back where it was); `i`: where it is. */
  unevict(task: PodInfo, i = this.openEviction(task)): void {
    if (i < 0) throw new Error(`statement: no eviction of ${task.name} to undo`);
    const ev = this.ops[i] as Extract<Op, { kind: "evict" }>;
    const node = ev.before ? this.node(ev.node) : null;
    const undo: Op = {
      kind: "undo",
      task,
      target: i,
      node: ev.node,
      before: node?.capture(task) ?? null,
      prev: fieldsOf(task),
      undone: false,
    };
    this.setFields(task, ev.prev);
    task.nodeName = ev.node;
    if (node?.pods.has(task.uid)) node.updateTask(task);
    else node?.addTask(task);
    this.ssn.fireAllocate(task);
    ev.undone = true;
    this.ops.push(undo);
  }

  /** Reverse one operation (in reverse order of application). */
  private reverse(op: Op): void {
    const { task } = op;
    this.setFields(task, op.prev);
    if (op.before) this.node(op.node).restore(op.before);
    switch (op.kind) {
      case "allocate":
      case "pipeline":
        this.ssn.fireDeallocate(task);
        break;
      case "withdraw":
      case "evict":
        this.ssn.fireAllocate(task);
        break;
      case "undo":
        this.ssn.fireDeallocate(task);
        this.ops[op.target]!.undone = false;
        break;
    }
  }

  rollback(cp: Checkpoint): void {
    if (cp < 0 || cp > this.ops.length)
      throw new Error(`statement: invalid checkpoint ${cp} of ${this.ops.length}`);
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
      const task = op.task;
      const node = this.node(task.nodeName!);
      const groups = task.gpuGroups;
      // Taken off as KAI does (through the accounting), then pipelined where it was.
      this.ssn.setPodStatus(task, "Pending");
      this.ssn.notePending(this.ssn.jobOf(task));
      node.removeTask(task);
      task.nodeName = null;
      task.gpuGroups = op.prev.gpuGroups;
      task.isVirtual = true;
      this.ssn.fireDeallocate(task);
      this.pipeline(task, node.name, true, groups);
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
          // No longer a candidate for re-placement: memos keyed on the job's revision must see it.
          this.ssn.memos.lasting.touch(this.ssn.jobOf(op.task));
          break;
        case "pipeline":
          this.ssn.recordPipeline(op.task, op.node, this.action);
          break;
        case "withdraw":
          this.ssn.withdrawPlacement(op.task, op.prev.status);
          this.ssn.memos.lasting.touch(this.ssn.jobOf(op.task));
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
