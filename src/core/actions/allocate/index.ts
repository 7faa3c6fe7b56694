// allocate: place pending jobs on free (or releasing) resources, queue by queue in
// fair order, each job all-or-nothing at its gang minimum (KAI: actions/allocate).
import type { JobInfo } from "../../api/podgroup-info.js";
import type { Action, Session } from "../../framework/session.js";
import type { Statement } from "../../framework/statement.js";
import { allocateJob } from "../common/allocate-job.js";
import { JobsOrderByQueues } from "../common/jobs-order-by-queues.js";

export const name = "allocate";

export function create(): Action {
  return { name, execute };
}

function execute(ssn: Session): void {
  const order = new JobsOrderByQueues(ssn, {
    filterNonPending: true,
    filterUnready: true,
    maxJobsQueueDepth: ssn.config.queueDepthPerAction.allocate,
    fixedJobOrder: true,
  }).initialize(ssn.jobsMaybePending());
  while (!order.isEmpty) {
    if (ssn.placements >= ssn.placementLimit) {
      ssn.unreached = order.remaining();
      return;
    }
    const job = order.popNextJob();
    if (!job) break;
    const stmt = ssn.statement("allocate");
    const alreadyAllocated = job.numAllocated > 0;
    const outcome = attempt(ssn, stmt, job);
    if (outcome !== "failed") {
      stmt.commit();
      if (outcome === "allocated" && !alreadyAllocated) job.lastStartAt = ssn.now;
      if (job.hasTasksToAllocate(true)) order.pushJob(job);
    } else stmt.discard();
  }
}

/** How a job's attempt ended: placed for binding, placed but only pipelined, or not placed. */
type Outcome = "allocated" | "pipelined" | "failed";

function attempt(ssn: Session, stmt: Statement, job: JobInfo): Outcome {
  if (!allocateJob(ssn, stmt, ssn.nodes, job, false)) return "failed";
  if (job.shouldPipelineJob()) {
    stmt.convertAllAllocatedToPipelined(job.uid);
    return "pipelined";
  }
  return "allocated";
}
