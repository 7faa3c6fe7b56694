// Cheap pre-check of an accumulated scenario (KAI: accumulated_scenario_filters/node_affinities):
// every pending task with a required node affinity must match some node the simulation
// could use (the feasible nodes plus the nodes of the scenario's victims). Applies with or
// without the predicates plugin, as in KAI.
import type { NodeInfo } from "../../../../api/node-info.js";
import type { PodInfo } from "../../../../api/pod-info.js";
import type { Session } from "../../../../framework/session.js";
import { nodeAffinityError } from "../../../../framework/node-selection.js";
import type { VictimScenario } from "../victim-scenario.js";
import type { ScenarioFilter } from "./scenario-filter.js";

export function hasRequiredNodeAffinity(t: PodInfo): boolean {
  return (t.spec.nodeNames?.length ?? 0) > 0 || (t.spec.nodeSelector?.length ?? 0) > 0;
}

export class NodeAffinitiesFilter implements ScenarioFilter {
  readonly name = "AccumulatedNodeAffinities";
  private readonly nodes = new Map<string, NodeInfo>();
  private readonly seen = new Set<string>();
  /** How much of the scenario's (append-only) victim lists was already taken in. */
  private recordedDone = 0;
  private potentialDone = 0;

  /** null when no pending task has a required node affinity (nothing to check). */
  static create(
    ssn: Session,
    scenario: VictimScenario,
    feasible: ReadonlyMap<string, NodeInfo>,
  ): NodeAffinitiesFilter | null {
    if (!scenario.pendingTasks.some(hasRequiredNodeAffinity)) return null;
    return new NodeAffinitiesFilter(ssn, scenario, feasible);
  }

  private constructor(
    private readonly ssn: Session,
    scenario: VictimScenario,
    feasible: ReadonlyMap<string, NodeInfo>,
  ) {
    for (const [name, node] of feasible) this.nodes.set(name, node);
    this.update(scenario);
  }

  private update(scenario: VictimScenario): void {
    const pot = scenario.potentialVictimTasks;
    const rec = scenario.recordedVictimTasks;
    for (; this.potentialDone < pot.length; this.potentialDone++) this.addVictim(pot[this.potentialDone]!);
    for (; this.recordedDone < rec.length; this.recordedDone++) this.addVictim(rec[this.recordedDone]!);
  }

  private addVictim(t: PodInfo): void {
    if (this.seen.has(t.uid)) return;
    this.seen.add(t.uid);
    if (!t.nodeName || this.nodes.has(t.nodeName)) return;
    const node = this.ssn.nodeByName.get(t.nodeName);
    if (node) this.nodes.set(t.nodeName, node);
  }

  accepts(scenario: VictimScenario): boolean {
    this.update(scenario);
    for (const t of scenario.pendingTasks)
      if (hasRequiredNodeAffinity(t) && !this.hasMatchingNode(t)) return false;
    return true;
  }

  private hasMatchingNode(t: PodInfo): boolean {
    const names = t.spec.nodeNames;
    if (names && names.length > 0) {
      for (const n of names) {
        const node = this.nodes.get(n);
        if (node && nodeAffinityError(t, node) === null) return true;
      }
      return false;
    }
    for (const node of this.nodes.values()) if (nodeAffinityError(t, node) === null) return true;
    return false;
  }
}
