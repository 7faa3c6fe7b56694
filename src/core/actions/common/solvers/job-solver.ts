// The victim search for one pending job (KAI: solvers/job_solver.go). The tasks of its
// attempt are solved incrementally: a prefix of 1 task, then 2, ... each as a partial
// job. The victims found for a prefix are recorded and form the first scenario of the
// next one; intermediate statements are discarded and only the last prefix's statement
// is kept. The job is solved when every pod set reaches its minimum and it has more
// placed pods than before. Each scenario examined takes one from the budget; a search the
// budget stops leaves a cursor, and one given a cursor goes on from it (search-resume).
import type { NodeInfo } from "../../../api/node-info.js";
import type { PodInfo } from "../../../api/pod-info.js";
import type { JobInfo } from "../../../api/podgroup-info.js";
import type { ActionName, SearchCursor } from "../../../api/result.js";
import type { Session } from "../../../framework/session.js";
import type { Statement } from "../../../framework/statement.js";
import { tasksToAllocate } from "../../../framework/tasks-to-allocate.js";
import { NodeGpuCapacity } from "./filters/idle-gpus.js";
import { ByNodeSolver, type ScenarioSolution, type SolutionValidator } from "./by-node-solver.js";
import { freeableGpus, freedGpus, sessionFreeWholeGpus, wholeGpuDemand } from "./gpu-budget.js";
import { partialJob } from "./job-copies.js";
import { ScenarioBuilder } from "./scenario-builder.js";
import { CURSOR_MISMATCH, PrefixProgress, type ResumePoint, cursorAt, resumePoint } from "./search-resume.js";
import type { ActionSearchBudget, JobSearchBudget } from "./search-budget.js";
import type { VictimGroup } from "./victim-scenario.js";
import type { VictimCandidates } from "./victims-queue.js";

export interface JobSolverOptions {
  action: ActionName;
  /** Nodes the preemptor may go to before any victim is chosen (see feasible-nodes); asked once per attempt. */
  feasibleNodes: () => readonly NodeInfo[];
  /** Judges a simulated scenario; null accepts every one. */
  validator: SolutionValidator | null;
  /** The victim queue of the attempt (each prefix pops a copy of it). */
  victims: () => VictimCandidates;
  /**
   * For pruning only: given the partial preemptor, whether the validator can never accept
   * a scenario that evicts at most `evicted` (null: any) and leaves a pod of `victim`
   * evicted — such victims may only be moved. Omitted: every victim may stay evicted.
   */
  mustMove?: (partial: JobInfo) => (victim: JobInfo, evicted: readonly PodInfo[] | null) => boolean;
  /** Bounds the scenarios this attempt examines (see search-budget). */
  budget: JobSearchBudget;
}

export interface JobSolution {
  solved: boolean;
  /** The statement to commit when solved (already undone otherwise). */
  statement: Statement | null;
  victims: PodInfo[];
  /** The search ended unsolved because the budget was spent (not because nothing fits). */
  searchStopped: boolean;
  /** Where the stopped search is to go on in the next session (null: not stopped mid-prefix). */
  cursor: SearchCursor | null;
}

export class JobSolver {
  /** Idle plus releasing whole GPUs before any simulation (the same for every prefix). */
  private freeGpus = 0;
  /** The attempt's victim queue as built: every prefix starts from the same session state. */
  private candidates: VictimCandidates | null = null;
  private feasibleNodes: readonly NodeInfo[] | null = null;
  /** GPUs per node before any victim, for the idle-GPU filter of every prefix. */
  private gpuCapacity: NodeGpuCapacity | null = null;
  /** Pods the attempt places (the most any prefix's filter needs). */
  private attemptTasks = 0;
  /** The scenarios tried in full of the prefix being solved (for a cursor). */
  private progress = new PrefixProgress();
  /** Jobs with a pending pod before any simulation, found on first need. */
  private pending: JobInfo[] | null = null;
  private readonly pendingJobs = (): readonly JobInfo[] => {
    if (!this.pending) {
      this.pending = [];
      for (const job of this.ssn.jobsMaybePending()) if (job.countOf("Pending") > 0) this.pending.push(job);
    }
    return this.pending;
  };

  constructor(
    private readonly ssn: Session,
    private readonly opts: JobSolverOptions,
  ) {}

  solve(job: JobInfo): JobSolution {
    const activeBefore = job.numActiveUsed;
    const tasks = tasksToAllocate(this.ssn, job, false).slice();
    this.freeGpus = sessionFreeWholeGpus(this.ssn);
    this.pending = null;
    this.candidates = null;
    this.feasibleNodes = null;
    this.gpuCapacity = null;
    this.attemptTasks = tasks.length;
    const given = this.ssn.searchCursors.take(this.opts.action, job.uid);
    let from = given ? resumePoint(this.ssn, given, tasks.length, this.victimCandidates().jobs) : null;
    let recordedGroups: VictimGroup[] = from?.recordedGroups ?? [];
    let recordedTasks: PodInfo[] = from?.recordedTasks ?? [];
    let statement: Statement | null = null;
    let stoppedAt = 0;
    for (let n = from?.prefix ?? 1; n <= tasks.length; n++) {
      const prefix = tasks.slice(0, n);
      const result = this.solvePrefix(partialJob(job, prefix), prefix, recordedGroups, recordedTasks, from);
      if (result === CURSOR_MISMATCH) {
        // The cluster moved on since the cursor was left: search from the start.
        from = null;
        recordedGroups = [];
        recordedTasks = [];
        n = 0;
        continue;
      }
      from = null;
      if (!result) {
        if (this.opts.budget.stopped) stoppedAt = n;
        break;
      }
      if (n < tasks.length) result.statement!.discard();
      statement = result.statement;
      recordedGroups = result.victimGroups;
      recordedTasks = result.victimTasks;
    }
    const solved = job.isGangSatisfied && job.numActiveUsed > activeBefore;
    // (KAI leaves such a statement applied but uncommitted; undoing it keeps the session clean.)
    if (!solved && statement) statement.discard();
    return {
      solved,
      statement: solved ? statement : null,
      victims: recordedTasks,
      searchStopped: !solved && this.opts.budget.stopped,
      cursor:
        !solved && stoppedAt > 0
          ? cursorAt(this.ssn, this.opts.action, job, tasks.length, stoppedAt, recordedTasks, this.progress)
          : null,
    };
  }

  private victimCandidates(): VictimCandidates {
    this.candidates ??= this.opts.victims();
    return this.candidates;
  }

  private solvePrefix(
    partial: JobInfo,
    prefix: readonly PodInfo[],
    recordedGroups: VictimGroup[],
    recordedTasks: PodInfo[],
    from: ResumePoint | null,
  ): ScenarioSolution | null | typeof CURSOR_MISMATCH {
    this.progress = new PrefixProgress();
    // A prefix task that is no longer placeable (KAI would crash on the empty scenario) solves nothing.
    if (tasksToAllocate(this.ssn, partial, false).length === 0) return null;
    const base = this.victimCandidates();
    const candidates = { queue: base.queue.clone(), jobs: base.jobs };
    const mustMove = this.opts.mustMove?.(partial) ?? null;
    const demand = wholeGpuDemand(prefix);
    // Which of `evicted` may stay evicted in a valid scenario. Jobs that must move lose
    // nothing, which can in turn force others to move: repeated until nothing changes.
    const mayStay = (evicted: readonly PodInfo[]): ((t: PodInfo) => boolean) => {
      if (!mustMove) return () => true;
      let pool = [...new Set(evicted)];
      let stays = new Map<string, boolean>();
      for (;;) {
        const next = new Map<string, boolean>();
        for (const t of pool) if (!next.has(t.jobUid)) next.set(t.jobUid, !mustMove(this.ssn.jobOf(t), pool));
        stays = next;
        const kept = pool.filter((t) => next.get(t.jobUid));
        if (kept.length === pool.length) break;
        pool = kept;
      }
      return (t) => stays.get(t.jobUid) ?? false;
    };
    if (demand > 0) {
      // Over every scenario of this prefix: what is free, the recorded victims, any candidate.
      const jobMayStay = (job: JobInfo) => !mustMove || !mustMove(job, null);
      let free = this.freeGpus;
      for (const g of recordedGroups)
        for (const t of g) if (t.req.isShared || jobMayStay(this.ssn.jobOf(t))) free += freedGpus(t);
      if (demand > free && demand > free + freeableGpus(this.ssn, candidates.jobs, jobMayStay, demand - free))
        return null;
    }

    const feasible = new Map<string, NodeInfo>();
    this.feasibleNodes ??= this.opts.feasibleNodes();
    for (const n of this.feasibleNodes) feasible.set(n.name, n);
    for (const t of recordedTasks) {
      const node = t.nodeName ? this.ssn.nodeByName.get(t.nodeName) : undefined;
      if (node) feasible.set(node.name, node);
    }
    this.gpuCapacity ??= new NodeGpuCapacity(this.ssn, this.attemptTasks);
    const builder = new ScenarioBuilder(
      this.ssn,
      partial,
      recordedGroups,
      candidates.queue,
      feasible,
      this.gpuCapacity,
    );
    // A node attempt evicting `tasks` can only succeed if they could free what the prefix needs.
    const mayFit = (tasks: readonly PodInfo[]) => {
      if (demand === 0) return true;
      const distinct = new Set(tasks);
      // Even with every victim staying evicted too little would be freed: no need to ask which may stay.
      let all = this.freeGpus;
      for (const t of distinct) all += freedGpus(t);
      if (demand > all) return false;
      const stays = mayStay(tasks);
      let b = this.freeGpus;
      for (const t of distinct) if (t.req.isShared || stays(t)) b += freedGpus(t);
      return demand <= b;
    };
    const solver = new ByNodeSolver(
      this.ssn,
      feasible,
      this.opts.validator,
      this.opts.action,
      this.pendingJobs,
      mayFit,
    );
    const progress = this.progress;
    let s = builder.first();
    if (from) {
      // Scenarios the earlier session tried already are built (cheap) but not simulated again.
      for (; s && progress.scenarios < from.afterScenarios; s = builder.next()) progress.note(s);
      if (progress.scenarios < from.afterScenarios || progress.lastVictim !== from.lastVictim)
        return CURSOR_MISMATCH;
    }
    for (; s && this.opts.budget.take(); s = builder.next()) {
      const result = solver.solve(s);
      if (result.solved) return result;
      progress.note(s);
    }
    return null;
  }
}

/**
 * One job's attempt in a disruptive action, on a budget of its own: the solution is
 * committed; a search the budget stopped says so in the job's fit errors. True when solved.
 */
export function solveJob(
  ssn: Session,
  job: JobInfo,
  budget: ActionSearchBudget,
  opts: Omit<JobSolverOptions, "budget">,
): boolean {
  const resuming = ssn.searchCursors.has(opts.action, job.uid);
  const jobBudget = budget.beginJob(resuming);
  // Nothing can be examined any more: not attempted (KAI: NotAttempted); a cursor it has is handed on.
  if (resuming ? budget.resumingExhausted : budget.exhausted) {
    jobBudget.stoppedBy = "maxScenariosPerAction";
    job.addFitError(jobBudget.message(job));
    return false;
  }
  const result = new JobSolver(ssn, { ...opts, budget: jobBudget }).solve(job);
  if (result.solved) result.statement?.commit();
  else if (result.searchStopped) job.addFitError(jobBudget.message(job));
  if (result.cursor) ssn.searchCursors.leave(result.cursor);
  return result.solved;
}
