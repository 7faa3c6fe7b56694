// What one session hands the next on the same cluster: the jobs it built. A job whose spec
// is the very same object in the next snapshot and whose pods kept their statuses through
// the session is renewed and used again instead of being built anew — at 100,000 pods,
// building jobs and pods is most of opening a session and of its garbage. Anything else
// (a new or changed spec, a pod that moved) is built from its spec as usual, and nodes are
// always built anew, so a session opened with a carry decides exactly what one without
// decides.
import type { JobInfo } from "../api/podgroup-info.js";
import type { PodGroupSpec } from "../api/spec.js";

export class SessionCarry {
  private jobs: ReadonlyMap<string, JobInfo> = new Map();
  /** Jobs renewed for the last session opened with this carry (a measure for callers). */
  carried = 0;

  /** The job for `spec`, renewed, when the last session left it untouched; else null. */
  take(spec: PodGroupSpec): JobInfo | null {
    const job = this.jobs.get(spec.uid);
    if (!job || job.spec !== spec || !job.untouched) return null;
    job.renew();
    this.carried++;
    return job;
  }

  /** Keep the jobs of a session that has ended, for the next one. */
  keep(jobs: ReadonlyMap<string, JobInfo>): void {
    this.jobs = jobs;
  }

  /** Start counting carried jobs for a new session. */
  opening(): void {
    this.carried = 0;
  }
}
