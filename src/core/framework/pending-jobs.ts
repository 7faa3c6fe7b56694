// Which jobs a walk for pending pods has to visit. A pod only becomes Pending again in its own
// job's undoing, so the jobs that had a pending pod when the session opened hold every pending
// pod, until a statement sets a pod of another job Pending: then every job may.
import type { JobInfo } from "../api/podgroup-info.js";

export class PendingJobs {
  /** The jobs with a pending pod when the session opened, in snapshot order. */
  private readonly atOpen: JobInfo[] = [];
  private readonly atOpenSet = new Set<JobInfo>();
  /** A pod of a job outside `atOpen` was set Pending since the session opened. */
  private elsewhere = false;

  /** `opened`: the session's jobs as opened, in snapshot order; `all`: its jobs by uid. */
  constructor(
    opened: readonly JobInfo[],
    private readonly all: ReadonlyMap<string, JobInfo>,
  ) {
    for (const job of opened)
      if (job.countOf("Pending") > 0) {
        this.atOpen.push(job);
        this.atOpenSet.add(job);
      }
  }

  /** The jobs, in snapshot order, among which every job with a pending pod is. */
  maybePending(): Iterable<JobInfo> {
    return this.elsewhere ? this.all.values() : this.atOpen;
  }

  /** A pod of `job` was set Pending. */
  note(job: JobInfo): void {
    if (!this.elsewhere && !this.atOpenSet.has(job)) this.elsewhere = true;
  }
}
