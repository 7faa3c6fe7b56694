// One scenario of the victim search (KAI: solvers/scenario/{base,by_node}_scenario.go):
// the partial preemptor, the victims recorded by earlier prefixes, and the potential
// victims accumulated so far. Victim pods are kept in groups — one group per time a job
// contributed pods — because a solution records whole groups, and the by-node search
// evicts every group of each job that has a potential victim on the node it tries.
import type { PodInfo } from "../../../api/pod-info.js";
import type { JobInfo } from "../../../api/podgroup-info.js";
import type { Scenario, Victim } from "../../../framework/scenario.js";
import type { Session } from "../../../framework/session.js";
import { isActiveAllocated } from "../../../api/status.js";

/** Pods of one victim job taken together. */
export type VictimGroup = readonly PodInfo[];

export class VictimScenario {
  readonly recordedVictimTasks: PodInfo[] = [];
  readonly potentialVictimTasks: PodInfo[] = [];
  /** Per job uid, its groups in the order they joined (recorded ones first). */
  private readonly groups = new Map<string, VictimGroup[]>();
  /** Per job uid, the real job and every pod it contributes (what validators judge). */
  private readonly victims = new Map<string, Victim>();
  /** Per node, the jobs with a potential victim pod on it, in the order they joined. */
  private readonly jobsByNode = new Map<string, string[]>();
  /** Per job uid, its place in `victims` (the order validators see). */
  private readonly position = new Map<string, number>();
  /** Victim jobs that joined with a pod not active-allocated (before any simulation). */
  private readonly unsettled = new Set<string>();

  constructor(
    private readonly ssn: Session,
    /** The partial preemptor (a copy holding this step's tasks). */
    readonly preemptor: JobInfo,
    readonly pendingTasks: readonly PodInfo[],
    readonly recordedVictimGroups: readonly VictimGroup[],
  ) {
    for (const g of recordedVictimGroups) {
      if (g.length === 0) continue;
      this.addGroup(g);
      this.recordedVictimTasks.push(...g);
    }
  }

  private addGroup(tasks: VictimGroup): void {
    const uid = tasks[0]!.jobUid;
    const list = this.groups.get(uid);
    if (list) list.push(tasks);
    else this.groups.set(uid, [tasks]);
    const v = this.victims.get(uid);
    if (v) v.tasks.push(...tasks);
    else {
      this.position.set(uid, this.victims.size);
      this.victims.set(uid, { job: this.ssn.jobs.get(uid)!, tasks: [...tasks] });
    }
    // Groups join between simulations, when the session is as the scenario found it.
    if (tasks.some((t) => !isActiveAllocated(t.status))) this.unsettled.add(uid);
  }

  addPotentialVictims(tasks: readonly PodInfo[]): void {
    if (tasks.length === 0) return;
    this.potentialVictimTasks.push(...tasks);
    this.addGroup([...tasks]);
    for (const t of tasks) {
      const node = t.nodeName ?? "";
      const jobs = this.jobsByNode.get(node);
      if (!jobs) this.jobsByNode.set(node, [t.jobUid]);
      else if (!jobs.includes(t.jobUid)) jobs.push(t.jobUid);
    }
  }

  /** The (real) job of the most recently added potential victim, or null. */
  latestPotentialVictim(): JobInfo | null {
    const last = this.potentialVictimTasks[this.potentialVictimTasks.length - 1];
    return last ? this.ssn.jobOf(last) : null;
  }

  /** Every pod of every group of the jobs with a potential victim on `node`. */
  victimTasksFromNode(node: string): PodInfo[] {
    const out: PodInfo[] = [];
    for (const uid of this.jobsByNode.get(node) ?? [])
      for (const g of this.groups.get(uid) ?? []) out.push(...g);
    return out;
  }

  /** The first group holding `task` (KAI: GetVictimJobRepresentativeById). */
  groupOf(task: PodInfo): VictimGroup | null {
    for (const g of this.groups.get(task.jobUid) ?? []) if (g.includes(task)) return g;
    return null;
  }

  /**
   * What validators see: the partial preemptor, its tasks, every victim job with all its
   * pods in the scenario, and — given the pods the simulation evicted or moved — the
   * victims it may have affected.
   */
  toValidatorInput(changed?: readonly PodInfo[]): Scenario {
    const scenario: Scenario = {
      preemptor: this.preemptor,
      pendingTasks: this.pendingTasks,
      victims: [...this.victims.values()],
    };
    if (changed) {
      const uids = new Set(this.unsettled);
      for (const t of changed) if (this.victims.has(t.jobUid)) uids.add(t.jobUid);
      scenario.affected = [...uids]
        .sort((a, b) => this.position.get(a)! - this.position.get(b)!)
        .map((uid) => this.victims.get(uid)!);
    }
    return scenario;
  }
}
