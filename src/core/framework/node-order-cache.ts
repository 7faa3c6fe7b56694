// One kept node order: for a node set and a pod shape, the nodes sorted by (tier score
// descending, placement rank ascending, name), with only changed nodes re-keyed.
import type { NodeInfo } from "../api/node-info.js";
import type { PodInfo } from "../api/pod-info.js";
import type { Session } from "./session.js";

export class NodeOrderCache {
  /** The pod currently asking (same shape as the one the order was built for). */
  task: PodInfo;
  order: NodeInfo[] = [];
  /** Disabled: scores are not in tiers for this shape, order the plain way. */
  private inexact = false;
  private readonly tier: Float64Array;
  private readonly rank: Float64Array;
  private readonly member: Uint8Array;
  private readonly seen: Uint32Array;
  private refreshStamp = 0;
  private logPos: number;
  private built = false;

  constructor(
    private readonly ssn: Session,
    private readonly nodes: readonly NodeInfo[],
    task: PodInfo,
  ) {
    this.task = task;
    const n = ssn.nodes.length;
    this.tier = new Float64Array(n);
    this.rank = new Float64Array(n);
    this.member = new Uint8Array(n);
    this.seen = new Uint32Array(n);
    this.logPos = ssn.nodeChanges.length;
    for (const node of nodes) this.member[node.index] = 1;
  }

  /** The kept order as a comparison (valid for every node of the set once refreshed). */
  readonly before = (a: NodeInfo, b: NodeInfo): number =>
    this.tier[b.index]! - this.tier[a.index]! ||
    this.rank[a.index]! - this.rank[b.index]! ||
    a.index - b.index;

  /** Compute a node's keys; false when they cannot be used (scores not in tiers). */
  private key(node: NodeInfo): boolean {
    const ssn = this.ssn;
    const task = this.task;
    let s = 0;
    for (const f of ssn.nodeOrderFns) s += f(task, node);
    if (s % 10 !== 0) return false;
    let r = 0;
    const p = ssn.placement;
    if (p) {
      if (p.maxScore > 9) return false;
      const k = p.rankKey(task, node);
      if (k === null) {
        // A node without the resource scores 0 like the emptiest one; harmless only when the pod needs some of it.
        if (!this.needsPlacementResource()) return false;
        r = Number.POSITIVE_INFINITY;
      } else r = k;
    }
    this.tier[node.index] = s;
    this.rank[node.index] = r;
    return true;
  }

  private needsPlacementResource(): boolean {
    const p = this.ssn.placement!;
    const t = this.task;
    return p.resourceOf(t) === "gpu" ? t.req.gpus > 0 : t.req.cpu > 0;
  }

  /** Bring the order up to date; false when it cannot be kept (use the plain order). */
  refresh(): boolean {
    if (this.inexact) return false;
    if (!this.built) {
      for (const node of this.nodes)
        if (!this.key(node)) {
          this.inexact = true;
          return false;
        }
      this.order = [...this.nodes].sort(this.before);
      this.built = true;
      this.logPos = this.ssn.nodeChanges.length;
      return true;
    }
    const log = this.ssn.nodeChanges;
    if (this.logPos === log.length) return true;
    const stamp = ++this.refreshStamp;
    for (let i = this.logPos; i < log.length; i++) {
      const node = log[i]!;
      if (!this.member[node.index] || this.seen[node.index] === stamp) continue;
      this.seen[node.index] = stamp;
      const at = this.positionOf(node);
      if (!this.key(node)) {
        this.inexact = true;
        return false;
      }
      // Most changes (a pod placed on the best node) leave the node where it was: no splice.
      const prev = this.order[at - 1];
      const next = this.order[at + 1];
      if ((!prev || this.before(prev, node) < 0) && (!next || this.before(node, next) < 0)) continue;
      this.order.splice(at, 1);
      this.order.splice(this.lowerBound(node), 0, node);
    }
    this.logPos = log.length;
    return true;
  }

  /** Binary search for a node's position under its current (stored) keys. */
  private lowerBound(node: NodeInfo): number {
    let lo = 0;
    let hi = this.order.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.before(this.order[mid]!, node) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Where the node is, found under the keys it was sorted by. */
  private positionOf(node: NodeInfo): number {
    const i = this.lowerBound(node);
    return this.order[i] === node ? i : this.order.indexOf(node);
  }
}
