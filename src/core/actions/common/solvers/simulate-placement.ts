// The simulation run for a scenario once its victims are evicted virtually (KAI:
// actions/common/action.go GetJobsToAllocate, TryToVirtuallyAllocatePreemptorAndGetVictims):
// every pending job, every victim job and the (partial) preemptor are ordered as allocate
// would order them; the preemptor and each victim job then get a pipeline-only placement
// in that order, so victims are re-placed where they still fit. Other pending jobs take
// part in the ordering only. The preemptor failing fails the simulation.
import type { NodeInfo } from "../../../api/node-info.js";
import type { PodInfo } from "../../../api/pod-info.js";
import type { JobInfo } from "../../../api/podgroup-info.js";
import type { Session } from "../../../framework/session.js";
import type { Statement } from "../../../framework/statement.js";
import { allocateJob } from "../allocate-job.js";
import { JobsOrderByQueues } from "../jobs-order-by-queues.js";

export function simulatePlacement(
  ssn: Session,
  stmt: Statement,
  nodes: readonly NodeInfo[],
  preemptor: JobInfo,
  victimTasks: readonly PodInfo[],
  pendingJobs: () => readonly JobInfo[],
): boolean {
  const victimJobs = new Map<string, JobInfo>();
  for (const t of victimTasks) if (!victimJobs.has(t.jobUid)) victimJobs.set(t.jobUid, ssn.jobOf(t));
  let preemptorPlaced = false;
  for (const job of placementOrder(ssn, preemptor, victimJobs, pendingJobs)) {
    if (job.uid === preemptor.uid) {
      if (!allocateJob(ssn, stmt, nodes, job, true)) return false;
      preemptorPlaced = true;
    } else allocateJob(ssn, stmt, nodes, job, true);
  }
  return preemptorPlaced;
}

/** The uids of an attempt's pending jobs (the same list for each of its simulations). */
function uidsOf(ssn: Session, jobs: readonly JobInfo[]): Set<string> {
  const sets = ssn.memos.pendingUids;
  let uids = sets.get(jobs);
  if (!uids) {
    uids = new Set(jobs.map((j) => j.uid));
    sets.set(jobs, uids);
  }
  return uids;
}

/** The preemptor and the victim jobs in the order the simulation's queue pops them. */
function placementOrder(
  ssn: Session,
  preemptor: JobInfo,
  victimJobs: Map<string, JobInfo>,
  pendingJobs: () => readonly JobInfo[],
): JobInfo[] {
  const relevant = [preemptor, ...[...victimJobs.values()].filter((j) => j.uid !== preemptor.uid)];
  // Within one leaf queue jobs leave in job order whatever the other queues hold.
  if (relevant.every((j) => j.queue === preemptor.queue)) return relevant.sort((a, b) => ssn.jobOrder(a, b));

  // Every pending job with the victims' and the preemptor's own copies in their places, then
  // the victims and the preemptor that are not pending (as a map keyed by uid would hold them).
  const pending = pendingJobs();
  const pendingUids = uidsOf(ssn, pending);
  const jobs: JobInfo[] = [];
  for (const job of pending)
    jobs.push(job.uid === preemptor.uid ? preemptor : (victimJobs.get(job.uid) ?? job));
  for (const [uid, job] of victimJobs) if (!pendingUids.has(uid) && uid !== preemptor.uid) jobs.push(job);
  if (!pendingUids.has(preemptor.uid)) jobs.push(preemptor);
  const order = new JobsOrderByQueues(ssn).initialize(jobs);
  const waiting = new Map(relevant.map((j) => [j.uid, j]));
  const out: JobInfo[] = [];
  // When one of them is left it comes last whatever else is popped before it.
  while (waiting.size > 1 && !order.isEmpty) {
    const job = order.popNextJob();
    if (!job) break;
    if (waiting.delete(job.uid)) out.push(job);
  }
  for (const job of waiting.values()) out.push(job);
  return out;
}
