// Victim queues (KAI: actions/utils GetVictimsQueue): the candidate jobs ordered so that
// the queue that would be served last, and in it the job that would be placed last,
// gives victims first.
import type { JobInfo } from "../../../api/podgroup-info.js";
import { isAlive } from "../../../api/status.js";
import type { Session } from "../../../framework/session.js";
import { JobsOrderByQueues, type JobsOrderOptions } from "../jobs-order-by-queues.js";

/** A victim queue and the jobs it was built from (for bounds over all candidates). */
export interface VictimCandidates {
  queue: JobsOrderByQueues;
  jobs: readonly JobInfo[];
}

export function victimCandidates(
  ssn: Session,
  jobs: JobInfo[],
  opts: JobsOrderOptions = {},
): VictimCandidates {
  return { queue: new JobsOrderByQueues(ssn, { ...opts, victimQueue: true }).initialize(jobs), jobs };
}

/**
 * Jobs with a live pod (on a known node, if it names one) that pass `filter`, as a victim
 * queue. `among` narrows the jobs looked at (all of the session's by default) when the
 * filter is known to reject the others.
 */
export function victimsQueue(
  ssn: Session,
  filter: (job: JobInfo) => boolean,
  among: Iterable<JobInfo> = ssn.jobs.values(),
): VictimCandidates {
  const jobs: JobInfo[] = [];
  for (const job of among) {
    const alive = job.pods.some((p) => isAlive(p.status) && (!p.nodeName || ssn.nodeByName.has(p.nodeName)));
    if (alive && filter(job)) jobs.push(job);
  }
  return victimCandidates(ssn, jobs);
}
