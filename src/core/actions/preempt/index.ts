// preempt: inside one queue, a pending job displaces lower-priority preemptible jobs.
// No fairness check: only the min-runtime validator judges scenarios; a non-preemptible
// preemptor that would take its queue over its deserved quota is skipped (KAI:
// actions/preempt).
import type { JobInfo } from "../../api/podgroup-info.js";
import type { Action, Session } from "../../framework/session.js";
import { tasksToAllocate } from "../../framework/tasks-to-allocate.js";
import { JobsOrderByQueues } from "../common/jobs-order-by-queues.js";
import { MinimalJobRepresentatives } from "../common/minimal-job-representatives.js";
import { feasibleNodesForJob } from "../common/solvers/feasible-nodes.js";
import { JobSolver } from "../common/solvers/job-solver.js";
import { ActionSearchBudget } from "../common/solvers/search-budget.js";
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
  const budget = ActionSearchBudget.of(name, ssn.params);
  // Per queue: the smallest jobs that failed, by scheduling signature.
  const failed = new Map<string, MinimalJobRepresentatives>();
  while (!order.isEmpty) {
    const job = order.popNextJob();
    if (!job) break;
    const reps = failed.get(job.queue) ?? new MinimalJobRepresentatives();
    failed.set(job.queue, reps);
    if (ssn.params.useSchedulingSignatures && reps.notEasierThan(job)) continue;
    // Over quota counts as a failed attempt (KAI checks it inside the attempt).
    if (!ssn.isNonPreemptibleJobOverQuota(job, tasksToAllocate(ssn, job, false)).schedulable) {
      reps.update(job);
      continue;
    }
    const jobBudget = budget.beginJob();
    const solver = new JobSolver(ssn, {
      action: name,
      feasibleNodes: feasibleNodesForJob(ssn, job),
      validator: (s) => ssn.preemptScenarioValid(s),
      victims: () => victimsQueue(ssn, (v) => isPreemptVictim(ssn, job, v), byQueue.get(job.queue) ?? []),
      budget: jobBudget,
    });
    const result = solver.solve(job);
    if (result.solved) result.statement?.commit();
    else {
      if (result.searchStopped) job.addFitError(jobBudget.message(job));
      reps.update(job);
    }
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
