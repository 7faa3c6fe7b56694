// Solving one scenario (KAI: solvers/by_pod_solver.go). The recorded victims are evicted
// virtually; then, for each node hosting the newest victim job, every potential victim
// job with a pod on that node is evicted too and a pipeline-only placement is simulated
// (the evicted victims' nodes join the feasible set). Victims the simulation re-placed
// elsewhere end Pipelined, victims put back where they were are no victims at all; the
// validator then judges the scenario. A rejected scenario ends the search of this
// scenario (no further node is tried). Node attempts that provably cannot yield a valid
// solution are left out only where KAI's outcome is the same (see solve).
import type { NodeInfo } from "../../../api/node-info.js";
import type { PodInfo } from "../../../api/pod-info.js";
import type { JobInfo } from "../../../api/podgroup-info.js";
import type { ActionName } from "../../../api/result.js";
import type { Scenario } from "../../../framework/scenario.js";
import type { Session } from "../../../framework/session.js";
import type { Statement } from "../../../framework/statement.js";
import { evictVictims } from "./evict-victims.js";
import { simulatePlacement } from "./simulate-placement.js";
import type { VictimGroup, VictimScenario } from "./victim-scenario.js";

export type SolutionValidator = (scenario: Scenario) => boolean;

export interface ScenarioSolution {
  solved: boolean;
  /** The victims: evicted pods, plus re-placed ones (always recorded, counted by validators only without consolidating reclaim). */
  victimTasks: PodInfo[];
  /** The scenario groups the victims belong to: the next prefix starts from them. */
  victimGroups: VictimGroup[];
  statement: Statement | null;
}

const UNSOLVED: ScenarioSolution = { solved: false, victimTasks: [], victimGroups: [], statement: null };

export class ByNodeSolver {
  constructor(
    private readonly ssn: Session,
    /** Shared with the job solver; nodes of tried victims are added and removed again on failure. */
    private readonly feasible: Map<string, NodeInfo>,
    private readonly validator: SolutionValidator | null,
    private readonly action: ActionName,
    /** The jobs with a pending pod before any simulation (they only take part in the ordering). */
    private readonly pendingJobs: () => readonly JobInfo[],
    /** False when evicting these pods cannot free enough for the preemptor (see gpu-budget). */
    private readonly mayFit: (evicted: readonly PodInfo[]) => boolean,
  ) {}

  solve(scenario: VictimScenario): ScenarioSolution {
    const latest = scenario.latestPotentialVictim();
    const recorded = scenario.recordedVictimTasks;
    if (!latest) {
      if (recorded.length === 0 || !this.mayFit(recorded)) return UNSOLVED;
      return this.withStatement(scenario, (stmt) => this.simulate(scenario, stmt, recorded));
    }
    // Every node attempt ends the scenario unsolved (failing the simulation moves on, a
    // rejected solution stops) — so the nodes after the last one that may fit are not tried.
    const nodes = nodesOfJob(this.ssn, latest.pods);
    let last = -1;
    nodes.forEach((node, i) => {
      if (this.mayFit([...recorded, ...scenario.victimTasksFromNode(node)])) last = i;
    });
    if (last < 0) return UNSOLVED;
    return this.withStatement(scenario, (stmt) =>
      this.solveOnNodes(scenario, stmt, nodes.slice(0, last + 1)),
    );
  }

  /** Run `f` on a statement holding the recorded victims' evictions; undo it all unless solved. */
  private withStatement(
    scenario: VictimScenario,
    f: (stmt: Statement) => ScenarioSolution | null,
  ): ScenarioSolution {
    const stmt = this.ssn.statement(this.action);
    evictVictims(this.ssn, stmt, scenario.recordedVictimTasks, scenario.preemptor, this.action);
    const result = f(stmt);
    if (result) return result;
    stmt.discard();
    return UNSOLVED;
  }

  private solveOnNodes(scenario: VictimScenario, stmt: Statement, nodes: string[]): ScenarioSolution | null {
    for (const node of nodes) {
      const cp = stmt.checkpoint();
      const potential = scenario.victimTasksFromNode(node);
      evictVictims(this.ssn, stmt, potential, scenario.preemptor, this.action);
      const added = this.addFeasible(potential);
      const result = this.simulate(scenario, stmt, [...scenario.recordedVictimTasks, ...potential]);
      if (result) return result;
      for (const n of added) this.feasible.delete(n);
      stmt.rollback(cp);
    }
    return null;
  }

  private addFeasible(tasks: readonly PodInfo[]): string[] {
    const added: string[] = [];
    for (const t of tasks) {
      if (!t.nodeName || this.feasible.has(t.nodeName)) continue;
      const node = this.ssn.nodeByName.get(t.nodeName);
      if (!node) continue;
      this.feasible.set(t.nodeName, node);
      added.push(t.nodeName);
    }
    return added;
  }

  /** null when the preemptor could not be placed (the caller rolls back and goes on). */
  private simulate(
    scenario: VictimScenario,
    stmt: Statement,
    victims: readonly PodInfo[],
  ): ScenarioSolution | null {
    const nodes = [...this.feasible.values()].sort((a, b) => a.index - b.index);
    if (!simulatePlacement(this.ssn, stmt, nodes, scenario.preemptor, victims, this.pendingJobs)) return null;
    const evicted: PodInfo[] = [];
    const moved: PodInfo[] = [];
    for (const t of victims) {
      // Pending: a nomination this session made, withdrawn and not re-placed.
      if (t.status === "Releasing" || t.status === "Pending") evicted.push(t);
      else if (t.status === "Pipelined") moved.push(t);
    }
    return this.judge(scenario, stmt, evicted, moved);
  }

  private judge(
    scenario: VictimScenario,
    stmt: Statement,
    evicted: PodInfo[],
    moved: PodInfo[],
  ): ScenarioSolution {
    const victimTasks = [...evicted, ...moved];
    if (this.validator && !this.validator(scenario.toValidatorInput(victimTasks))) {
      stmt.discard();
      return UNSOLVED;
    }
    return { solved: true, victimTasks, victimGroups: groupsOf(scenario, victimTasks), statement: stmt };
  }
}

/** The nodes a victim job's pods name (a pod without a node counts as node ""), in node order. */
function nodesOfJob(ssn: Session, pods: readonly PodInfo[]): string[] {
  const names = new Set<string>();
  for (const p of pods) names.add(p.nodeName ?? "");
  const index = (n: string) => ssn.nodeByName.get(n)?.index ?? Number.MAX_SAFE_INTEGER;
  return [...names].sort((a, b) => index(a) - index(b) || (a < b ? -1 : a > b ? 1 : 0));
}

/** The distinct scenario groups holding the victims, in first-seen order. */
function groupsOf(scenario: VictimScenario, tasks: readonly PodInfo[]): VictimGroup[] {
  const out: VictimGroup[] = [];
  for (const t of tasks) {
    if (out.some((g) => g.includes(t))) continue;
    const g = scenario.groupOf(t);
    if (g) out.push(g);
  }
  return out;
}
