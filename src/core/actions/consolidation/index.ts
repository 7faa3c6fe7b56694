// consolidation: make room for a pending preemptible job by moving running preemptible
// pods to other nodes. A scenario is valid only if every victim it evicted is re-placed
// (no one loses its place, pods only move) (KAI: actions/consolidation).
import type { JobInfo } from "../../api/podgroup-info.js";
import type { Scenario } from "../../framework/scenario.js";
import type { Action, Session } from "../../framework/session.js";
import { JobsOrderByQueues } from "../common/jobs-order-by-queues.js";
import { FailedJobs } from "../common/minimal-job-representatives.js";
import { feasibleNodesForJob } from "../common/solvers/feasible-nodes.js";
import { solveJob } from "../common/solvers/job-solver.js";
import { ActionSearchBudget } from "../common/solvers/search-budget.js";
import { victimsQueue } from "../common/solvers/victims-queue.js";
import { enoughGpusInCluster } from "./enough-gpus.js";

export const name = "consolidation";

export function create(): Action {
  return { name, execute };
}

function execute(ssn: Session): void {
  const maxPreemptees = ssn.params.maxConsolidationPreemptees;
  if (maxPreemptees === 0) return;
  const order = new JobsOrderByQueues(ssn, {
    filterNonPending: true,
    filterUnready: true,
    filterNonPreemptible: true,
    maxJobsQueueDepth: ssn.config.queueDepthPerAction.consolidation,
  }).initialize(ssn.jobsMaybePending());
  const budget = ActionSearchBudget.of(name, ssn.params);
  const failed = new FailedJobs(ssn, ssn.params.useSchedulingSignatures, false);
  while (!order.isEmpty) {
    const job = order.popNextJob();
    if (!job) break;
    if (failed.skip(job)) continue;
    const solved =
      enoughGpusInCluster(ssn, job) &&
      solveJob(ssn, job, budget, {
        action: name,
        feasibleNodes: () => feasibleNodesForJob(ssn, job),
        validator: allVictimsReplaced,
        victims: () => victimsQueue(ssn, preempteeFilter(job, maxPreemptees)),
        // Every victim must be re-placed: none may stay evicted.
        mustMove: () => () => true,
      });
    if (!solved) failed.record(job);
  }
}

function allVictimsReplaced(s: Scenario): boolean {
  return s.victims.every((v) => v.tasks.every((t) => t.status !== "Releasing" && t.status !== "Pending"));
}

/** Preemptible placed jobs other than the preemptor; with a limit, at most limit+1 of them (as KAI counts). */
function preempteeFilter(preemptor: JobInfo, max: number): (job: JobInfo) => boolean {
  let taken = 0;
  return (job) => {
    if (!job.preemptible || job.uid === preemptor.uid) return false;
    if (max !== -1 && taken > max) return false;
    if (job.numActiveAllocated === 0) return false;
    taken++;
    return true;
  };
}
