// Which nodes have no room for a pod, and the short reasons why (KAI:
// NewFitErrorInsufficientResource). Every failed scan asks this of every node — thousands
// of pending pods with the same request against a full cluster — and the answer depends
// only on the request and the node's resources, so it is kept per node until the node
// changes (its version) or another request asks — and, for a scan of every node that
// found no room anywhere, for the whole scan until any node changes.
import type { NodeInfo } from "../api/node-info.js";
import type { PodInfo } from "../api/pod-info.js";
import type { TaskRequest } from "../api/resources.js";
import type { NodeErrors } from "./fit-errors.js";

export class NoRoomMemo {
  /** Nodes short of the same things share one reasons array (thousands of nodes, few distinct lists). */
  private readonly interned = new Map<string, string[]>(SHORTAGE_KEYS);
  /** Per node index: the request last found without room there, at which node version. */
  private readonly req: (TaskRequest | undefined)[] = [];
  private readonly version: number[] = [];
  /** …and its reasons once asked (null: it fits on idle alone, nothing is recorded). */
  private readonly short: (readonly string[] | null | undefined)[] = [];

  /** Whether `task` fits into idle + releasing of `node`. */
  hasRoom(task: PodInfo, node: NodeInfo): boolean {
    const i = node.index;
    if (this.req[i] === task.req && this.version[i] === node.version) return false;
    if (node.isTaskAllocatableOnReleasingOrIdle(task)) return true;
    this.req[i] = task.req;
    this.version[i] = node.version;
    this.short[i] = undefined;
    return false;
  }

  /** For a node `hasRoom` has just refused: the reasons to record, or null for none. */
  reasons(task: PodInfo, node: NodeInfo): readonly string[] | null {
    const i = node.index;
    let r = this.short[i];
    if (r === undefined) {
      r = node.isTaskAllocatable(task) ? null : this.insufficientResources(task, node);
      this.short[i] = r;
    }
    return r;
  }

  /** One shared array per distinct predicate reason. */
  internReason(reason: string): string[] {
    return this.intern([reason]);
  }

  private intern(reasons: string[]): string[] {
    const k = reasons.join("\u0000");
    let v = this.interned.get(k);
    if (!v) {
      v = reasons;
      if (this.interned.size < 1024) this.interned.set(k, v);
    }
    return v;
  }

  /** Short reasons a node lacks room for the task (KAI: NewFitErrorInsufficientResource). */
  private insufficientResources(task: PodInfo, node: NodeInfo): string[] {
    const req = task.req;
    const freeGpus = node.allocatable.gpus - node.used.gpus - node.shared.usedGroupCount();
    // The common case, once per node of every failed scan: no strings, no arrays.
    if (!req.mig && !req.extended) {
      const mask =
        (req.gpus > freeGpus ? 1 : 0) |
        (req.gpuMemory > node.gpuMemory ? 2 : 0) |
        (Math.trunc(req.cpu) > Math.trunc(node.allocatable.cpu - node.used.cpu) ? 4 : 0) |
        (req.memory > node.allocatable.memory - node.used.memory ? 8 : 0) |
        (node.allocatable.pods - node.used.pods < 1 ? 16 : 0);
      return byShortage[mask]!;
    }
    const out: string[] = [];
    if (req.mig) {
      for (const [k, v] of req.mig)
        if (node.allocatable.scalar(k) - node.used.scalar(k) < v)
          out.push(`node(s) didn't have enough of mig profile: ${k}`);
    } else {
      if (req.gpus > freeGpus) out.push(BASIC_SHORTAGES[0]!);
      if (req.gpuMemory > node.gpuMemory) out.push(BASIC_SHORTAGES[1]!);
    }
    if (Math.trunc(req.cpu) > Math.trunc(node.allocatable.cpu - node.used.cpu)) out.push(BASIC_SHORTAGES[2]!);
    if (req.memory > node.allocatable.memory - node.used.memory) out.push(BASIC_SHORTAGES[3]!);
    if (node.allocatable.pods - node.used.pods < 1) out.push(BASIC_SHORTAGES[4]!);
    if (req.extended)
      for (const [k, v] of req.extended)
        if (node.allocatable.scalar(k) - node.used.scalar(k) < v)
          out.push(`node(s) didn't have enough resources: ${k}`);
    if (out.length === 0) out.push("node(s) didn't have enough resources");
    return this.intern(out);
  }
}

/**
 * Scans of every node of the session that found no room anywhere, per request, with the
 * records they left: while no node changes (the session's change log does not grow), a pod
 * with the same request is refused everywhere again with the same reasons. So it is too when
 * every node changed since is still refused for room with the very reasons recorded for it:
 * the other nodes are as they were, and the scan would record what it recorded.
 */
export class FailedScans {
  private readonly byRequest = new Map<TaskRequest, { at: number; errors: NodeErrors }>();

  /** `changes`: the session's node change log (every change to a node, in order). */
  constructor(private readonly changes: readonly NodeInfo[]) {}

  /** `refusal`: the reasons a node has no room for `task` now (null: it has room). */
  find(task: PodInfo, refusal: (node: NodeInfo) => readonly string[] | null): NodeErrors | null {
    const e = this.byRequest.get(task.req);
    if (!e) return null;
    const log = this.changes;
    if (e.at === log.length) return e.errors;
    const { byNode, lists } = e.errors;
    // Past a few changes a scan of every node is as cheap.
    if (!byNode || log.length - e.at > MAX_CHANGED) return null;
    for (let i = e.at; i < log.length; i++) {
      const node = log[i]!;
      const r = refusal(node);
      if (r === null || node.index >= byNode.length || lists[byNode[node.index]!] !== r) return null;
    }
    e.at = log.length;
    return e.errors;
  }

  remember(task: PodInfo, errors: NodeErrors): void {
    this.byRequest.set(task.req, { at: this.changes.length, errors });
  }
}

/** How many node changes FailedScans.find looks through before leaving it to a scan. */
const MAX_CHANGED = 256;

const BASIC_SHORTAGES = [
  "node(s) didn't have enough resources: GPUs",
  "node(s) didn't have enough resources: GPU memory",
  "node(s) didn't have enough resources: CPU cores",
  "node(s) didn't have enough resources: memory",
  "node(s) didn't have enough resources: pods",
];
/** Reason lists of pods without MIG or extended requests, by bit mask of BASIC_SHORTAGES. */
const byShortage: string[][] = Array.from({ length: 1 << BASIC_SHORTAGES.length }, (_, mask) => {
  const out = BASIC_SHORTAGES.filter((_, i) => mask & (1 << i));
  return out.length ? out : ["node(s) didn't have enough resources"];
});
/** The lists of `byShortage` by key, to start each memo's interned lists with. */
const SHORTAGE_KEYS: readonly [string, string[]][] = byShortage.map((l) => [l.join("\u0000"), l]);
