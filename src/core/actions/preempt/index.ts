// preempt: inside one queue, a pending job displaces lower-priority preemptible jobs.
// No fairness check: only the min-runtime validator judges scenarios; a non-preemptible
// preemptor that would take its queue over its deserved quota is skipped (KAI:
// actions/preempt).
import type { JobInfo } from "../../api/podgroup-info.js";
import type { Action, Session } from "../../framework/session.js";
import { tasksToAllocate } from "../../framework/tasks-to-allocate.js";
import { JobsOrderByQueues } from "../common/jobs-order-by-queues.js";
import { FailedJobs } from "../common/minimal-job-representatives.js";
import { feasibleNodesForJob } from "../common/solvers/feasible-nodes.js";
import { solveJob } from "../common/solvers/job-solver.js";
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
  }).initialize(ssn.jobsMaybePending());
  // Victims come from the preemptor's own queue only.
  const byQueue = new Map<string, JobInfo[]>();
  for (const j of ssn.jobs.values()) {
    const list = byQueue.get(j.queue);
    if (list) list.push(j);
    else byQueue.set(j.queue, [j]);
  }
  const budget = ActionSearchBudget.of(name, ssn.params);
  const failed = new FailedJobs(ssn, ssn.params.useSchedulingSignatures, true);
  while (!order.isEmpty) {
    const job = order.popNextJob();
    if (!job) break;
    if (failed.skip(job)) continue;
    // Over quota counts as a failed attempt (KAI checks it inside the attempt).
    const solved =
      ssn.isNonPreemptibleJobOverQuota(job, tasksToAllocate(ssn, job, false)).schedulable &&
      solveJob(ssn, job, budget, {
        action: name,
        feasibleNodes: () => feasibleNodesForJob(ssn, job),
        validator: (s) => ssn.preemptScenarioValid(s),
        victims: () => victimsQueue(ssn, (v) => isPreemptVictim(ssn, job, v), lowerPriority(job, byQueue)),
      });
    if (!solved) failed.record(job);
  }
}

/** The jobs of the preemptor's queue that isPreemptVictim's first checks (fixed in a session) let through, in order. */
function lowerPriority(preemptor: JobInfo, byQueue: ReadonlyMap<string, JobInfo[]>): JobInfo[] {
  const out: JobInfo[] = [];
  for (const j of byQueue.get(preemptor.queue) ?? [])
    if (j.preemptible && j.priority < preemptor.priority) out.push(j);
  return out;
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
