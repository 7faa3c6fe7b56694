// preempt: inside one queue, a pending job displaces lower-priority preemptible jobs.
// No fairness check: only the min-runtime validator judges scenarios; a non-preemptible
// preemptor that would take its queue over its deserved quota is skipped (KAI:
// actions/preempt).
import type { JobInfo } from "../../api/podgroup-info.js";
import type { Action, Session } from "../../framework/session.js";
import { tasksToAllocate } from "../../framework/tasks-to-allocate.js";
import { JobsOrderByQueues } from "../common/jobs-order-by-queues.js";
import { feasibleNodesForJob } from "../common/solvers/feasible-nodes.js";
import { JobSolver } from "../common/solvers/job-solver.js";
import { victimsQueue } from "../common/solvers/victims-queue.js";

export const name = "preempt";

export function create(): Action {
  return { name, execute };
}

function execute(ssn: Session): void {
  const order = new JobsOrderByQueues(ssn, {
    filterNonPending: true,
    filterUnready: true,
    maxJobsQueueDepth: ssn.config.queueDepthPerAction.preempt,
  }).initialize(ssn.jobs.values());
  // Victims come from the preemptor's own queue only.
  const byQueue = new Map<string, JobInfo[]>();
  for (const j of ssn.jobs.values()) {
    const list = byQueue.get(j.queue);
    if (list) list.push(j);
    else byQueue.set(j.queue, [j]);
  }
  while (!order.isEmpty) {
    const job = order.popNextJob();
    if (!job) break;
    if (!ssn.isNonPreemptibleJobOverQuota(job, tasksToAllocate(ssn, job, false)).schedulable) continue;
    const solver = new JobSolver(ssn, {
      action: name,
      feasibleNodes: feasibleNodesForJob(ssn, job),
      validator: (s) => ssn.preemptScenarioValid(s),
      victims: () => victimsQueue(ssn, (v) => isPreemptVictim(ssn, job, v), byQueue.get(job.queue) ?? []),
    });
    const result = solver.solve(job);
    if (result.solved) result.statement?.commit();
  }
}

/** Same queue, strictly lower priority, preemptible, placed, and allowed by the victim filters. */
function isPreemptVictim(ssn: Session, preemptor: JobInfo, job: JobInfo): boolean {
  return (
    job.preemptible &&
    job.priority < preemptor.priority &&
    job.queue === preemptor.queue &&
    job.uid !== preemptor.uid &&
    job.numActiveAllocated > 0 &&
    ssn.preemptVictimFilter(preemptor, job)
  );
}
