// What one session hands the next on the same cluster: the jobs and nodes it built. A job
// whose spec is the very same object in the next snapshot and whose pods kept their statuses
// through the session is renewed and used again instead of being built anew — on a large cluster,
// building jobs and pods is most of opening a session and of its garbage. A node whose spec is
// the very same object, that the session left untouched, and that gets the very same pods
// again (all of carried jobs, so unchanged) is renewed too instead of adding every pod again.
// Anything else (a new or changed spec, a pod that moved, a node a session changed) is built
// from its spec as usual, so a session opened with a carry decides exactly what one without
// decides.
import type { NodeInfo } from "../api/node-info.js";
import type { PodInfo } from "../api/pod-info.js";
import type { JobInfo } from "../api/podgroup-info.js";
import type { NodeSpec, PodGroupSpec } from "../api/spec.js";

export class SessionCarry {
  private jobs: ReadonlyMap<string, JobInfo> = new Map();
  private nodes = new Map<string, NodeInfo>();
  /** The session being opened, as an id unique among all carries' (a job taken for it has it as `takenAt`). */
  private opened = 0;
  /** Jobs taken for the session being opened. */
  private taken = 0;
  /** Jobs renewed for the last session opened with this carry (a measure for callers). */
  carried = 0;
  /** Nodes renewed for the last session opened with this carry. */
  carriedNodes = 0;

  /** The job for `spec`, renewed, when the last session left it untouched; else null. */
  take(spec: PodGroupSpec): JobInfo | null {
    const job = this.jobs.get(spec.uid);
    if (!job || job.spec !== spec || !job.untouched) return null;
    job.renew();
    job.takenAt = this.opened;
    this.taken++;
    this.carried++;
    return job;
  }

  /** Whether `job` was taken for the session being opened. */
  took(job: JobInfo | undefined): boolean {
    return job !== undefined && job.takenAt === this.opened;
  }

  /** The last session's jobs not taken for the session being opened (so far). */
  *notTaken(): Iterable<JobInfo> {
    if (this.taken === this.jobs.size) return;
    for (const job of this.jobs.values()) if (job.takenAt !== this.opened) yield job;
  }

  /** Whether the last session's nodes are still all held, and are exactly the nodes of `specs`
   * by name (whatever their specs). */
  heldNodes(specs: readonly NodeSpec[]): boolean {
    if (specs.length !== this.nodes.size) return false;
    for (const s of specs) if (!this.nodes.get(s.name)?.arrival) return false;
    return true;
  }

  /** The node for `spec` holding `pods` (in the order they are added), renewed, when the last
   * session left it untouched with these very pods on it; else null. */
  takeNode(spec: NodeSpec, pods: readonly PodInfo[]): NodeInfo | null {
    const node = this.nodes.get(spec.name);
    if (!node || node.spec !== spec || !node.renew(pods)) return null;
    this.nodes.delete(spec.name);
    this.carriedNodes++;
    return node;
  }

  /** The pods the last session met on the node `name`, in the order it met them (see Session). */
  arrivalOn(name: string): readonly PodInfo[] | undefined {
    return this.nodes.get(name)?.arrival ?? undefined;
  }

  /** The pods the last session opened the node `name` with (its arrival sorted by name). */
  podsOn(name: string): readonly PodInfo[] | undefined {
    return this.nodes.get(name)?.openedWith ?? undefined;
  }

  /** Keep the jobs and nodes of a session that has ended, for the next one. */
  keep(jobs: ReadonlyMap<string, JobInfo>, nodes: ReadonlyMap<string, NodeInfo>): void {
    this.jobs = jobs;
    this.nodes = new Map(nodes);
    this.taken = 0;
    this.opened = ++openings;
    let place = 0;
    for (const job of jobs.values()) job.place = place++;
  }

  /** Start counting carried jobs and nodes for a new session. */
  opening(): void {
    this.carried = 0;
    this.carriedNodes = 0;
    this.taken = 0;
    this.opened = ++openings;
  }
}

/** Sessions opened with any carry (ids for `takenAt`). */
let openings = 0;
