// What the core remembers of its own computations, and who owns it. A session owns its
// SessionMemos: whatever depends on its plugins or its nodes goes with it. What is derived from
// a job or a pod alone (LastingMemos) lives as long as those objects do: a session opened
// with a carry shares the carry's, so a carried job keeps what was computed for it; a session
// without one gets its own (the jobs and pods it builds are new).
import type { PodInfo } from "../api/pod-info.js";
import type { JobInfo } from "../api/podgroup-info.js";
import type { PodStatus } from "../api/spec.js";
import type { AttemptResources } from "./tasks-to-allocate.js";

/** A job's scheduling signature, valid while the job's revision is `revision`. */
export interface SignatureMemo {
  revision: number;
  signature: string;
}

/** What evicting every placed pod of a job could free, by whole-GPU pods and by shared pods. */
export interface JobFreeable {
  revision: number;
  whole: number;
  shared: number;
}

/** Memos keyed by jobs and pods, computed from those objects alone. */
export class LastingMemos {
  /** Per pod (its spec never changes): its placement constraints as a string. */
  readonly podConstraintKeys = new WeakMap<PodInfo, string>();
  readonly signatures = new WeakMap<JobInfo, SignatureMemo>();
  readonly freeable = new WeakMap<JobInfo, JobFreeable>();
  /** Per job, the changes its sessions made to it (none: its pods have their specs' statuses).
   * What is memoized of a job holds while its revision does. */
  private readonly revisions = new WeakMap<JobInfo, number>();
  /** Per job while untouched: its pods per status, as built. */
  private readonly countsAsBuilt = new WeakMap<JobInfo, Partial<Record<PodStatus, number>>>();

  revision(job: JobInfo): number {
    return this.revisions.get(job) ?? 0;
  }

  /** A session changed the job (a pod's status, or what a statement's commit records). */
  touch(job: JobInfo): void {
    this.revisions.set(job, (this.revisions.get(job) ?? 0) + 1);
  }

  /** No session changed the job since it was built from its spec. */
  untouched(job: JobInfo): boolean {
    return !this.revisions.has(job);
  }

  /** The job's pods per status; while it is untouched the same object every time: shared, do
   * not modify. */
  statusCounts(job: JobInfo): Partial<Record<PodStatus, number>> {
    if (!this.untouched(job)) return job.podStatusCounts();
    let counts = this.countsAsBuilt.get(job);
    if (!counts) {
      counts = job.podStatusCounts();
      this.countsAsBuilt.set(job, counts);
    }
    return counts;
  }
}

/** The tasks an attempt of a job takes, valid while the job's revision is `revision`. */
export interface AttemptTasks {
  revision: number;
  tasks: PodInfo[];
  /** Summed request of `tasks`, filled on first use (KAI caches it with the task list). */
  resources: AttemptResources | null;
}

/** Which of a victim job's pods a scenario takes next. */
export interface TasksToEvict {
  tasks: PodInfo[];
  /** The job keeps placed pods that were not taken (the rest goes back to the victim queue). */
  hasMore: boolean;
}

/** Idle and releasing GPUs by node index, and the node versions they were counted at. */
export interface NodeGpusMemo {
  idle: Float64Array;
  releasing: Float64Array;
  versions: Int32Array;
}

export class SessionMemos {
  /** Per job object (orders are the session's plugins'; a copy of a job has its own). */
  readonly tasksToAllocate = new WeakMap<JobInfo, AttemptTasks>();
  /** Per job (orders are the session's plugins'). */
  readonly tasksToEvict = new WeakMap<JobInfo, { revision: number; result: TasksToEvict }>();
  nodeGpus: NodeGpusMemo | null = null;
  /** Idle plus releasing whole GPUs of the nodes, and how many node changes the log held then. */
  freeWholeGpus: { changes: number; free: number } | null = null;
  /** The uids of an attempt's pending jobs, by the list its simulations share. */
  readonly pendingUids = new WeakMap<readonly JobInfo[], Set<string>>();

  constructor(readonly lasting: LastingMemos) {}
}
