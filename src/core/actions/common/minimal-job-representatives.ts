// Skipping jobs that cannot do better than one that already failed (KAI:
// actions/common/minimal_job_comparison.go, used when UseSchedulingSignatures is on).
// After a job fails in a disruptive action, it becomes the representative of its
// scheduling signature unless a representative with a smaller footprint exists; a later
// job with the same signature is tried only if it is "easier to schedule" than the
// representative: fewer pending pods, or, pod by pod in request order, some pod strictly
// smaller before the comparison runs out. The comparisons are KAI's, including their
// quirks (a pod that is larger does not end the comparison; equal jobs are not easier).
import type { JobInfo } from "../../api/podgroup-info.js";
import type { TaskRequest } from "../../api/resources.js";
import type { Session } from "../../framework/session.js";
import { schedulingSignature } from "./scheduling-signature.js";

/** KAI's minimum difference for GPU portions to count as different. */
const MIN_GPU_DIFF = 0.01;

function mapLessEqual(a: ReadonlyMap<string, number> | null, b: ReadonlyMap<string, number> | null): boolean {
  if (!a) return true;
  for (const [k, v] of a) {
    const w = b?.get(k);
    if (w === undefined || v > w) return false;
  }
  return true;
}

/** KAI's ResourceRequirements.LessEqual: every resource of `a` at most that of `b`. */
export function requestLessEqual(a: TaskRequest, b: TaskRequest): boolean {
  if (a.cpu > b.cpu || a.memory > b.memory) return false;
  if (!mapLessEqual(a.extended, b.extended)) return false;
  if (a.gpuDevices > b.gpuDevices) return false;
  if (!(a.gpuPortion < b.gpuPortion || Math.abs(a.gpuPortion - b.gpuPortion) < MIN_GPU_DIFF)) return false;
  return mapLessEqual(a.mig, b.mig);
}

/**
 * The pending pods' requests sorted by `requestLessEqual` the way Go's sort.Slice sorts
 * short slices (insertion sort); the order is a partial one, so the algorithm is part of
 * the result. Pods are taken in the job's pod order (KAI: map order, unspecified).
 */
function sortedPendingRequests(job: JobInfo): TaskRequest[] {
  const out: TaskRequest[] = [];
  for (const p of job.pods) if (p.status === "Pending") out.push(p.req);
  for (let i = 1; i < out.length; i++)
    for (let j = i; j > 0 && requestLessEqual(out[j]!, out[j - 1]!); j--) {
      const t = out[j]!;
      out[j] = out[j - 1]!;
      out[j - 1] = t;
    }
  return out;
}

/** KAI's jobEasierToScheduleComparison(job, representative). */
export function easierToSchedule(job: JobInfo, rep: JobInfo): boolean {
  const mine = sortedPendingRequests(job);
  const theirs = sortedPendingRequests(rep);
  if (mine.length === 0 || theirs.length === 0) return false;
  if (theirs.length > mine.length) return true;
  for (let i = 0; i < mine.length; i++) {
    if (i >= theirs.length) return false;
    if (requestLessEqual(mine[i]!, theirs[i]!)) {
      if (requestLessEqual(theirs[i]!, mine[i]!)) continue;
      return true;
    }
  }
  return false;
}

/** KAI's isPodGroupFootprintSmaller: every pending pod of `a` at most its counterpart in `b`. */
export function footprintSmaller(a: JobInfo, b: JobInfo): boolean {
  const mine = sortedPendingRequests(a);
  const theirs = sortedPendingRequests(b);
  if (mine.length === 0 || theirs.length === 0 || mine.length > theirs.length) return false;
  for (let i = 0; i < mine.length; i++) if (!requestLessEqual(mine[i]!, theirs[i]!)) return false;
  return true;
}

export class MinimalJobRepresentatives {
  private readonly representatives = new Map<string, JobInfo>();

  constructor(private readonly ssn: Session) {}

  /** The representative `job` is not easier than, or null when it is worth trying. */
  notEasierThan(job: JobInfo): JobInfo | null {
    const rep = this.representatives.get(schedulingSignature(this.ssn, job));
    if (!rep) return null;
    return easierToSchedule(job, rep) ? null : rep;
  }

  /** Record a failed job: it represents its signature if it is the first or smaller. */
  update(job: JobInfo): void {
    const key = schedulingSignature(this.ssn, job);
    const current = this.representatives.get(key);
    if (current && !footprintSmaller(job, current)) return;
    this.representatives.set(key, job);
  }
}

/**
 * The jobs that failed so far in one disruptive action, kept as representatives per queue
 * (reclaim, preempt) or over all queues (consolidation, as KAI keeps them).
 */
export class FailedJobs {
  private readonly byQueue = new Map<string, MinimalJobRepresentatives>();

  constructor(
    private readonly ssn: Session,
    /** KAI's UseSchedulingSignatures: skip jobs no easier than one that failed. */
    private readonly skipping: boolean,
    private readonly perQueue: boolean,
  ) {}

  private of(job: JobInfo): MinimalJobRepresentatives {
    const key = this.perQueue ? job.queue : "";
    let reps = this.byQueue.get(key);
    if (!reps) {
      reps = new MinimalJobRepresentatives(this.ssn);
      this.byQueue.set(key, reps);
    }
    return reps;
  }

  /** The job is not worth an attempt: no easier than one that failed. */
  skip(job: JobInfo): boolean {
    return this.skipping && this.of(job).notEasierThan(job) !== null;
  }

  record(job: JobInfo): void {
    this.of(job).update(job);
  }
}
