// The victim search for one pending job (KAI: solvers/job_solver.go). The tasks of its
// attempt are solved incrementally: a prefix of 1 task, then 2, ... each as a partial
// job. The victims found for a prefix are recorded and form the first scenario of the
// next one; intermediate statements are discarded and only the last prefix's statement
// is kept. The job is solved when every pod set reaches its minimum and it has more
// placed pods than before.
import type { NodeInfo } from "../../../api/node-info.js";
import type { PodInfo } from "../../../api/pod-info.js";
import type { JobInfo } from "../../../api/podgroup-info.js";
import type { ActionName } from "../../../api/result.js";
import type { Session } from "../../../framework/session.js";
import type { Statement } from "../../../framework/statement.js";
import { tasksToAllocate } from "../../../framework/tasks-to-allocate.js";
import type { JobsOrderByQueues } from "../jobs-order-by-queues.js";
import { ByNodeSolver, type ScenarioSolution, type SolutionValidator } from "./by-node-solver.js";
import { partialJob } from "./job-copies.js";
import { ScenarioBuilder } from "./scenario-builder.js";
import type { VictimGroup } from "./victim-scenario.js";

export interface JobSolution {
  solved: boolean;
  /** The statement to commit when solved (already discarded otherwise). */
  statement: Statement | null;
  victims: PodInfo[];
}

export class JobSolver {
  constructor(
    private readonly ssn: Session,
    private readonly feasibleNodes: readonly NodeInfo[],
    private readonly validator: SolutionValidator | null,
    /** A fresh victim queue for each prefix. */
    private readonly victimsQueue: () => JobsOrderByQueues,
    private readonly action: ActionName,
  ) {}

  solve(job: JobInfo): JobSolution {
    const activeBefore = job.numActiveUsed;
    const tasks = tasksToAllocate(this.ssn, job, false).slice();
    let recordedGroups: VictimGroup[] = [];
    let recordedTasks: PodInfo[] = [];
    let statement: Statement | null = null;
    for (let n = 1; n <= tasks.length; n++) {
      const result = this.solvePrefix(partialJob(job, tasks.slice(0, n)), recordedGroups, recordedTasks);
      if (!result) break;
      if (n < tasks.length) result.statement!.discard();
      statement = result.statement;
      recordedGroups = result.victimGroups;
      recordedTasks = result.victimTasks;
    }
    const solved = job.isGangSatisfied && job.numActiveUsed > activeBefore;
    // (KAI leaves such a statement applied but uncommitted; undoing it keeps the session clean.)
    if (!solved && statement) statement.discard();
    return { solved, statement: solved ? statement : null, victims: recordedTasks };
  }

  private solvePrefix(partial: JobInfo, recordedGroups: VictimGroup[], recordedTasks: PodInfo[]): ScenarioSolution | null {
    const feasible = new Map<string, NodeInfo>();
    for (const n of this.feasibleNodes) feasible.set(n.name, n);
    for (const t of recordedTasks) {
      const node = t.nodeName ? this.ssn.nodeByName.get(t.nodeName) : undefined;
      if (node) feasible.set(node.name, node);
    }
    const builder = new ScenarioBuilder(this.ssn, partial, recordedGroups, this.victimsQueue(), feasible);
    const solver = new ByNodeSolver(this.ssn, feasible, this.validator, this.action);
    for (let s = builder.first(); s; s = builder.next()) {
      const result = solver.solve(s);
      if (result.solved) return result;
    }
    return null;
  }
}
