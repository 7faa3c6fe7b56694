// What one session hands the next on the same cluster: the jobs and nodes it built. A job
// whose spec is the very same object in the next snapshot and whose pods kept their statuses
// through the session is renewed and used again instead of being built anew — on a large cluster,
// building jobs and pods is most of opening a session and of its garbage. A node whose spec is
// the very same object, that the session left untouched, and that gets the very same pods
// again (all of carried jobs, so unchanged) is taken again too instead of adding every pod
// again. Anything else (a new or changed spec, a pod that moved, a node a session changed) is
// built from its spec as usual (./build.ts), so a session opened with a carry decides exactly
// what one without decides. What the carry needs to know of a job or node besides the object
// itself it keeps here, by the object.
import type { NodeInfo } from "../../api/node-info.js";
import type { PodInfo } from "../../api/pod-info.js";
import type { JobInfo } from "../../api/podgroup-info.js";
import { TaskRequests } from "../../api/resources.js";
import type { NodeSpec, PodGroupSpec } from "../../api/spec.js";
import { LastingMemos } from "../memo.js";

/** A job as the carry knows it. */
interface CarriedJob {
  /** Its position among the jobs of the last session kept. */
  place: number;
  /** Its position among the jobs of the session being opened. */
  opening: number;
  /** The opening it was last taken for (`SessionCarry.opened`). */
  takenAt: number;
  /**
   * What a plugin computed from the job's pods when its session opened (the fair-share sums),
   * valid while the job opens as it did: its pods with the same statuses and the shares they
   * were accepted with on their nodes. Null for a job built, or with a pod added to a node
   * built anew or to none.
   */
  atOpen: unknown;
}

/** A node as the carry knows it. */
interface CarriedNode {
  /** The node's version when its session opened: untouched while it holds. */
  openedAt: number;
  /** The pods its session opened it with, in the order they were added. */
  openedWith: readonly PodInfo[];
  /** The same pods in the order the session met them (snapshot order), before sorting; null
   * when jobs of equal uids left that order unusable. */
  arrival: readonly PodInfo[] | null;
}

export class SessionCarry {
  private jobs: ReadonlyMap<string, JobInfo> = new Map();
  private nodes = new Map<string, NodeInfo>();
  private readonly jobState = new WeakMap<JobInfo, CarriedJob>();
  private readonly nodeState = new WeakMap<NodeInfo, CarriedNode>();
  /** Pod requests, shared by the pods its sessions build and the pods they carry. */
  readonly requests = new TaskRequests();
  /** What was computed from its jobs, pods and specs alone, for the sessions it opens. */
  readonly memos = new LastingMemos();
  /** The session being opened, as an id (a job taken for it has it as `takenAt`). */
  private opened = 0;
  /** Jobs taken for the session being opened. */
  private taken = 0;
  /** The place of the job taken last, and whether every job so far came after the one before. */
  private lastPlace = -1;
  private inOrder = true;
  /** Jobs renewed for the last session opened with this carry (a measure for callers). */
  carried = 0;
  /** Nodes renewed for the last session opened with this carry. */
  carriedNodes = 0;

  /** Start counting carried jobs and nodes for a new session. */
  opening(): void {
    this.carried = 0;
    this.carriedNodes = 0;
    this.taken = 0;
    this.opened++;
    this.lastPlace = -1;
    this.inOrder = true;
  }

  /**
   * The job for `spec`, renewed, when the last session left it untouched; else null. `position`:
   * its place among the jobs of the session being opened.
   */
  take(spec: PodGroupSpec, position: number): JobInfo | null {
    const job = this.jobs.get(spec.uid);
    if (!job || job.spec !== spec || !this.memos.untouched(job)) return null;
    const state = this.jobState.get(job);
    if (!state) return null;
    renew(job);
    state.takenAt = this.opened;
    state.opening = position;
    if (state.place <= this.lastPlace) this.inOrder = false;
    this.lastPlace = state.place;
    this.taken++;
    this.carried++;
    return job;
  }

  /** A job built for the session being opened, at `position` among its jobs. */
  built(job: JobInfo, position: number): void {
    this.jobState.set(job, { place: -1, opening: position, takenAt: -1, atOpen: null });
  }

  /** The carried jobs came in the order they came in the last session kept. */
  get keptOrder(): boolean {
    return this.inOrder;
  }

  /** Whether `job` was taken for the session being opened. */
  took(job: JobInfo | undefined): boolean {
    return job !== undefined && this.jobState.get(job)?.takenAt === this.opened;
  }

  /** The position of `job` among the jobs of the session being opened. */
  position(job: JobInfo): number {
    return this.jobState.get(job)!.opening;
  }

  /** The last session's jobs not taken for the session being opened (so far). */
  *notTaken(): Iterable<JobInfo> {
    if (this.taken === this.jobs.size) return;
    for (const job of this.jobs.values()) if (this.jobState.get(job)?.takenAt !== this.opened) yield job;
  }

  /** `job`'s pods may open with other shares than at its last open: what was kept at open goes. */
  reopened(job: JobInfo): void {
    const state = this.jobState.get(job);
    if (state) state.atOpen = null;
  }

  /** What was kept with `job` at open (see CarriedJob.atOpen), or null. */
  keptAtOpen(job: JobInfo): unknown {
    return this.jobState.get(job)?.atOpen ?? null;
  }

  /** Keep `value`, computed from `job`'s pods as its session opened, for the sessions it opens alike. */
  keepAtOpen(job: JobInfo, value: unknown): void {
    const state = this.jobState.get(job);
    if (state) state.atOpen = value;
  }

  /** Whether the last session's nodes are still all held, and are exactly the nodes of `specs`
   * by name (whatever their specs). */
  heldNodes(specs: readonly NodeSpec[]): boolean {
    if (specs.length !== this.nodes.size) return false;
    for (const s of specs) {
      const node = this.nodes.get(s.name);
      if (!node || !this.nodeState.get(node)?.arrival) return false;
    }
    return true;
  }

  /** The node for `spec` holding `pods` (in the order they are added), when the last session left
   * it untouched with these very pods on it; else null. */
  takeNode(spec: NodeSpec, pods: readonly PodInfo[]): NodeInfo | null {
    const node = this.nodes.get(spec.name);
    if (!node || node.spec !== spec || !this.holdsExactly(node, pods)) return null;
    this.nodes.delete(spec.name);
    this.carriedNodes++;
    return node;
  }

  /**
   * Whether the node, untouched since its session opened, holds exactly `pods` in this order:
   * then its accounting is already theirs, and so is the share each pod holds (each is of an
   * untouched job, and only this node, the one it is on, set it). Never for nodes that report
   * their devices: adding a pod may pick its devices.
   */
  private holdsExactly(node: NodeInfo, pods: readonly PodInfo[]): boolean {
    const state = this.nodeState.get(node);
    if (!state || node.devices || node.version !== state.openedAt || pods.length !== node.pods.size)
      return false;
    // The very list it was opened with: untouched since, it holds exactly these entries.
    if (pods === state.openedWith) return true;
    let i = 0;
    for (const entry of node.pods.values()) {
      const pod = pods[i++]!;
      if (entry.pod !== pod || entry.status !== pod.status) return false;
    }
    return true;
  }

  /** The session being opened opens `node` as it is, holding `pods` (met in `arrival` order). */
  openedNode(node: NodeInfo, pods: readonly PodInfo[], arrival: readonly PodInfo[] | null): void {
    const state = this.nodeState.get(node);
    if (!state) {
      this.nodeState.set(node, { openedAt: node.version, openedWith: pods, arrival });
      return;
    }
    state.openedAt = node.version;
    state.openedWith = pods;
    state.arrival = arrival;
  }

  /** The pods the last session met on the node `name`, in the order it met them. */
  arrivalOn(name: string): readonly PodInfo[] | undefined {
    const node = this.nodes.get(name);
    return (node && this.nodeState.get(node)?.arrival) ?? undefined;
  }

  /** The pods the last session opened the node `name` with (its arrival sorted by name). */
  podsOn(name: string): readonly PodInfo[] | undefined {
    const node = this.nodes.get(name);
    return node && this.nodeState.get(node)?.openedWith;
  }

  /** Keep the jobs and nodes of a session that has ended, for the next one. */
  keep(jobs: ReadonlyMap<string, JobInfo>, nodes: ReadonlyMap<string, NodeInfo>): void {
    this.jobs = jobs;
    this.nodes = new Map(nodes);
    this.taken = 0;
    this.opened++;
    let place = 0;
    for (const job of jobs.values()) {
      const state = this.jobState.get(job);
      if (state) state.place = place++;
      else this.jobState.set(job, { place: place++, opening: -1, takenAt: -1, atOpen: null });
    }
  }
}

/**
 * Make an untouched job of an ended session the job its spec gives, for the next session: what
 * a session sets on the job is reset. Its pods are left as they are: no statement changed them
 * (each would have counted in the job's revision), so they differ from their specs only in what
 * adding them to their nodes set when the session opened (the accepted share, devices on a node
 * that reports them). The next session keeps that where the node is taken again and resets the
 * pod where it is added to a node built anew or to none.
 */
function renew(job: JobInfo): void {
  if (job.fitErrors.length > 0) job.fitErrors.length = 0;
  job.lastStartAt = job.spec.lastStartAt;
  job.staleSince = job.spec.staleSince;
}
