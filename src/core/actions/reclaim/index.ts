// reclaim: a queue below its fair share takes resources back from queues above theirs.
// Pending jobs are tried in fair order; a job whose queue would stay within its fair
// share searches victims among preemptible jobs of other queues, largest-share queue
// first, and the proportion plugin judges each scenario (KAI: actions/reclaim).
import type { JobInfo } from "../../api/podgroup-info.js";
import type { Action, Session } from "../../framework/session.js";
import { JobsOrderByQueues } from "../common/jobs-order-by-queues.js";
import { FailedJobs } from "../common/minimal-job-representatives.js";
import { feasibleNodesForJob } from "../common/solvers/feasible-nodes.js";
import { solveJob } from "../common/solvers/job-solver.js";
import { ActionSearchBudget } from "../common/solvers/search-budget.js";
import { type VictimCandidates, victimCandidates } from "../common/solvers/victims-queue.js";

export const name = "reclaim";

export function create(): Action {
  return { name, execute };
}

function execute(ssn: Session): void {
  const order = new JobsOrderByQueues(ssn, {
    filterNonPending: true,
    filterUnready: true,
    maxJobsQueueDepth: ssn.config.queueDepthPerAction.reclaim,
  }).initialize(ssn.jobsMaybePending());
  const budget = ActionSearchBudget.of(name, ssn.params);
  const failed = new FailedJobs(ssn, ssn.params.useSchedulingSignatures, true);
  while (!order.isEmpty) {
    const job = order.popNextJob();
    if (!job) break;
    if (!ssn.canReclaimResources(job) || failed.skip(job)) continue;
    ssn.onJobSolutionStart();
    const victims = (): VictimCandidates =>
      victimCandidates(ssn, reclaimCandidates(ssn, job), {
        filterNonPreemptible: true,
        filterNonActiveAllocated: true,
      });
    const solved = solveJob(ssn, job, budget, {
      action: name,
      feasibleNodes: () => feasibleNodesForJob(ssn, job),
      validator: (s) => ssn.reclaimScenarioValid(s),
      victims,
      mustMove: (partial) => (victim, evicted) => ssn.reclaimVictimMustMove(partial, victim, evicted),
    });
    if (!solved) failed.record(job);
  }
}

/** Jobs of other queues that the victim filters allow (the victim queue keeps the preemptible, placed ones). */
function reclaimCandidates(ssn: Session, reclaimer: JobInfo): JobInfo[] {
  const jobs: JobInfo[] = [];
  for (const job of ssn.jobs.values())
    if (job.queue !== reclaimer.queue && ssn.reclaimVictimFilter(reclaimer, job)) jobs.push(job);
  return jobs;
}
