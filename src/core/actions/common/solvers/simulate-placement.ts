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
): boolean {
  const victimJobs = new Set<string>();
  for (const t of victimTasks) victimJobs.add(t.jobUid);
  const jobs = new Map<string, JobInfo>();
  for (const job of ssn.jobs.values()) if (job.countOf("Pending") > 0) jobs.set(job.uid, job);
  for (const uid of victimJobs) jobs.set(uid, ssn.jobs.get(uid)!);
  jobs.set(preemptor.uid, preemptor);
  const order = new JobsOrderByQueues(ssn).initialize(jobs.values());

  // Once the preemptor and every victim job have had their turn, the rest are only skipped.
  let remaining = victimJobs.size + 1;
  let preemptorPlaced = false;
  while (remaining > 0 && !order.isEmpty) {
    const job = order.popNextJob();
    if (!job) break;
    if (job.uid === preemptor.uid) {
      remaining--;
      if (!allocateJob(ssn, stmt, nodes, job, true)) return false;
      preemptorPlaced = true;
    } else if (victimJobs.has(job.uid)) {
      remaining--;
      allocateJob(ssn, stmt, nodes, job, true);
    }
  }
  return preemptorPlaced;
}
