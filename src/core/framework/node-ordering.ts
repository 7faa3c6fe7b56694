// Node order and node fit for one task (KAI: session.go OrderedNodesByTask, FittingNode).
// Every plugin's node score is summed; nodes go by score descending, ties by name.
import type { NodeInfo } from "../api/node-info.js";
import type { PodInfo } from "../api/pod-info.js";
import type { JobInfo } from "../api/podgroup-info.js";
import { WHOLE_GPU } from "./callbacks.js";
import { TaskFitErrors } from "./fit-errors.js";
import type { Session } from "./session.js";

export class NodeOrdering {
  constructor(private readonly ssn: Session) {}

  /** `nodes` ordered for `task`: score descending, then name. */
  ordered(nodes: readonly NodeInfo[], task: PodInfo): NodeInfo[] {
    const ssn = this.ssn;
    for (const f of ssn.nodePreOrderFns) f(task, nodes);
    const n = nodes.length;
    const scores = new Float64Array(n);
    const fns = ssn.nodeOrderFns;
    for (let i = 0; i < n; i++) {
      let s = 0;
      const node = nodes[i]!;
      for (let k = 0; k < fns.length; k++) s += fns[k]!(task, node);
      scores[i] = s;
    }
    const idx = Array.from({ length: n }, (_, i) => i);
    idx.sort((a, b) => {
      const d = scores[b]! - scores[a]!;
      if (d !== 0) return d;
      const na = nodes[a]!.name;
      const nb = nodes[b]!.name;
      return na < nb ? -1 : na > nb ? 1 : 0;
    });
    return idx.map((i) => nodes[i]!);
  }

  /** Try nodes in order until `tryNode` succeeds; true when one did. */
  firstFit(nodes: readonly NodeInfo[], task: PodInfo, tryNode: (node: NodeInfo) => boolean): boolean {
    for (const node of this.ordered(nodes, task)) if (tryNode(node)) return true;
    return false;
  }

  /**
   * Can `task` go on `node` (resources in idle+releasing, then the predicates)? With
   * `record`, the reason it cannot is kept for the job's "why pending" record.
   */
  fits(task: PodInfo, job: JobInfo, node: NodeInfo, record: boolean): boolean {
    const ssn = this.ssn;
    if (!node.isTaskAllocatableOnReleasingOrIdle(task)) {
      if (record && !node.isTaskAllocatable(task)) {
        const e = new TaskFitErrors();
        e.setNodeError(node.name, insufficientResources(task, node));
        ssn.addTaskFitErrors(job, task, e);
      }
      return false;
    }
    const err = ssn.predicate(task, job, node);
    if (err) {
      if (record) {
        const e = new TaskFitErrors();
        e.setNodeError(node.name, [err]);
        ssn.addTaskFitErrors(job, task, e);
      }
      return false;
    }
    return true;
  }

  /**
   * Device candidates for a shared-GPU task on `node`, best first: partly used groups
   * with room, then one WHOLE_GPU entry per idle or releasing device.
   */
  fittingGpus(node: NodeInfo, task: PodInfo): string[] {
    const ssn = this.ssn;
    const cands: string[] = [];
    for (const g of node.shared.groups()) if (node.shared.fitsOnGroup(task.req, g)) cands.push(g);
    const whole = Math.trunc(node.idle.gpus) + Math.trunc(node.releasing.gpus);
    for (let i = 0; i < whole; i++) cands.push(WHOLE_GPU);
    const scored = cands.map((g, i) => ({ g, i, s: ssn.gpuOrder(task, node, g) }));
    scored.sort((a, b) => b.s - a.s || a.i - b.i);
    return scored.map((x) => x.g);
  }
}

/** Short reasons a node lacks room for the task (KAI: NewFitErrorInsufficientResource). */
export function insufficientResources(task: PodInfo, node: NodeInfo): string[] {
  const req = task.req;
  const out: string[] = [];
  const freeGpus = node.allocatable.gpus - node.used.gpus - node.shared.usedGroupCount();
  if (req.mig) {
    for (const [k, v] of req.mig)
      if (node.allocatable.scalar(k) - node.used.scalar(k) < v) out.push(`node(s) didn't have enough of mig profile: ${k}`);
  } else {
    if (req.gpus > freeGpus) out.push("node(s) didn't have enough resources: GPUs");
    if (req.gpuMemory > node.gpuMemory) out.push("node(s) didn't have enough resources: GPU memory");
  }
  if (Math.trunc(req.cpu) > Math.trunc(node.allocatable.cpu - node.used.cpu))
    out.push("node(s) didn't have enough resources: CPU cores");
  if (req.memory > node.allocatable.memory - node.used.memory) out.push("node(s) didn't have enough resources: memory");
  if (node.allocatable.pods - node.used.pods < 1) out.push("node(s) didn't have enough resources: pods");
  if (req.extended)
    for (const [k, v] of req.extended)
      if (node.allocatable.scalar(k) - node.used.scalar(k) < v) out.push(`node(s) didn't have enough resources: ${k}`);
  if (out.length === 0) out.push("node(s) didn't have enough resources");
  return out;
}
