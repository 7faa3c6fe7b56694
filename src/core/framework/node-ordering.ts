// Node order and node fit for one task (KAI: session.go OrderedNodesByTask, FittingNode).
// Every plugin's node score is summed; nodes go by score descending, ties by name.
//
// Rescoring every node for every pod is what makes large cycles slow, so orders are
// kept per (node set, pod shape) and only nodes that changed since are rescored and
// moved. This is exact when the non-placement scores come in tiers (multiples of 10,
// as all of KAI's do) above the placement score (≤ 9): then the order is the tier sum,
// then the placement's rank, then the name. Any pod or node set for which that does not
// hold is ordered the plain way.
import type { NodeInfo } from "../api/node-info.js";
import type { PodInfo } from "../api/pod-info.js";
import type { JobInfo } from "../api/podgroup-info.js";
import { WHOLE_GPU } from "./callbacks.js";
import { FailedScans, NoRoomMemo } from "./no-room.js";
import { NodeOrderCache } from "./node-order-cache.js";
import type { Session } from "./session.js";

const MAX_CACHED_ORDERS = 64;
const MIN_CACHED_SET = 512;
/** A node set at least 1/SUBSET_SHARE of the session's is walked in the session-wide kept order. */
const SUBSET_SHARE = 64;
/** …and one under 1/SORT_SHARE of them is sorted by its keys rather than found in that walk. */
const SORT_SHARE = 16;

export class NodeOrdering {
  private readonly caches = new Map<number, Map<string, NodeOrderCache>>();
  private cachedCount = 0;
  private readonly setIds = new WeakMap<readonly NodeInfo[], number>();
  private nextSetId = 0;
  private memberStamp = new Uint32Array(0);
  private stamp = 0;
  private readonly noRoom = new NoRoomMemo();
  /** Nodes `fits` refused for room and recorded reasons for, so far (a scan counts its own). */
  roomRefusals = 0;
  readonly failedScans: FailedScans;

  constructor(private readonly ssn: Session) {
    this.failedScans = new FailedScans(ssn.nodeChanges);
  }

  /** `nodes` ordered for `task`: score descending, then name. */
  ordered(nodes: readonly NodeInfo[], task: PodInfo): NodeInfo[] {
    const ssn = this.ssn;
    for (const f of ssn.nodePreOrderFns) f(task, nodes);
    ssn.placement?.preOrder?.(task, nodes);
    const n = nodes.length;
    const scores = new Float64Array(n);
    for (let i = 0; i < n; i++) scores[i] = this.score(task, nodes[i]!);
    const idx = Array.from({ length: n }, (_, i) => i);
    idx.sort((a, b) => scores[b]! - scores[a]! || nodes[a]!.index - nodes[b]!.index);
    return idx.map((i) => nodes[i]!);
  }

  /** The summed score of `node` for `task` (after the pre-order hooks ran). */
  score(task: PodInfo, node: NodeInfo): number {
    const ssn = this.ssn;
    let s = 0;
    for (const f of ssn.nodeOrderFns) s += f(task, node);
    for (const a of ssn.attemptNodeOrderFns) if (a.appliesTo(task)) s += a.fn(task, node);
    if (ssn.placement) s += ssn.placement.score(task, node);
    return s;
  }

  /** Try nodes in order until `tryNode` succeeds; true when one did. */
  firstFit(nodes: readonly NodeInfo[], task: PodInfo, tryNode: (node: NodeInfo) => boolean): boolean {
    const ssn = this.ssn;
    if (nodes !== ssn.nodes && nodes.length * SUBSET_SHARE >= ssn.nodes.length) {
      // A good part of the session's nodes (a solver's feasible nodes, a topology domain): the
      // kept order of all nodes, restricted to these, is their order too — the keys are per
      // node, only the scores' scale depends on the set — and it is kept up to date already.
      const all = this.cacheFor(ssn.nodes, task);
      if (all?.refresh()) {
        // A set far smaller than the session's is sorted by the kept order's keys instead.
        if (nodes.length * SORT_SHARE < ssn.nodes.length) {
          for (const node of [...nodes].sort(all.before)) if (tryNode(node)) return true;
          return false;
        }
        const stamp = this.markMembers(nodes);
        for (const node of all.order)
          if (this.memberStamp[node.index] === stamp && tryNode(node)) return true;
        return false;
      }
    }
    const cache = this.cacheFor(nodes, task);
    const order = cache?.refresh() ? cache.order : this.ordered(nodes, task);
    for (const node of order) if (tryNode(node)) return true;
    return false;
  }

  /** Stamp `nodes` as the current members (no allocation per call). */
  private markMembers(nodes: readonly NodeInfo[]): number {
    if (this.memberStamp.length !== this.ssn.nodes.length)
      this.memberStamp = new Uint32Array(this.ssn.nodes.length);
    const stamp = ++this.stamp;
    for (const n of nodes) this.memberStamp[n.index] = stamp;
    return stamp;
  }

  private cacheFor(nodes: readonly NodeInfo[], task: PodInfo): NodeOrderCache | null {
    const ssn = this.ssn;
    // Small sets (a rack, a solver's feasible nodes) are cheap to order the plain way, and
    // come and go too fast for a kept order to pay off.
    if (nodes !== ssn.nodes && nodes.length < MIN_CACHED_SET) return null;
    if (ssn.nodePreOrderFns.length > 0) return null;
    for (const a of ssn.attemptNodeOrderFns) if (a.appliesTo(task)) return null;
    let setId = this.setIds.get(nodes);
    if (setId === undefined) {
      setId = this.nextSetId++;
      this.setIds.set(nodes, setId);
    }
    let bySet = this.caches.get(setId);
    if (!bySet) {
      bySet = new Map();
      this.caches.set(setId, bySet);
    }
    let c = bySet.get(task.shape);
    if (!c) {
      if (this.cachedCount >= MAX_CACHED_ORDERS) {
        // Forget everything rather than track recency: a cycle rarely has this many pod shapes.
        this.caches.clear();
        this.cachedCount = 0;
        bySet = new Map();
        this.caches.set(setId, bySet);
      }
      c = new NodeOrderCache(ssn, nodes, task);
      bySet.set(task.shape, c);
      this.cachedCount++;
    }
    c.task = task;
    return c;
  }

  /** The reasons `fits` records when `node` has no room for `task`; null when it has room. */
  roomRefusal(task: PodInfo, node: NodeInfo): readonly string[] | null {
    return this.noRoom.hasRoom(task, node) ? null : this.noRoom.reasons(task, node);
  }

  /**
   * Can `task` go on `node` (resources in idle+releasing, then the predicates)? With
   * `record`, the reason it cannot is kept for the job's "why pending" record.
   */
  fits(task: PodInfo, job: JobInfo, node: NodeInfo, record: boolean): boolean {
    const ssn = this.ssn;
    if (!this.noRoom.hasRoom(task, node)) {
      const reasons = record ? this.noRoom.reasons(task, node) : null;
      if (reasons) {
        ssn.fitErrorsFor(job, task).setNodeError(node.index, reasons);
        this.roomRefusals++;
      }
      return false;
    }
    const err = ssn.predicate(task, job, node);
    if (err) {
      if (record) ssn.fitErrorsFor(job, task).setNodeError(node.index, this.noRoom.internReason(err));
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
