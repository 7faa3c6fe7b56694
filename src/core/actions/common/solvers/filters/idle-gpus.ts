// Cheap pre-check of an accumulated scenario (KAI: accumulated_scenario_filters/idle_gpus):
// can the pending tasks' GPUs be matched, largest first and greedily, onto the N nodes
// with the most idle+releasing GPUs once the scenario's victims are gone (N = number of
// pending tasks)? Greedy matching can reject a scenario a cleverer packing would fit;
// KAI skips those too, so this is kept exact rather than "improved".
import type { NodeInfo } from "../../../../api/node-info.js";
import type { PodInfo } from "../../../../api/pod-info.js";
import type { VictimScenario } from "../victim-scenario.js";
import type { ScenarioFilter } from "./scenario-filter.js";

/** GPUs a victim frees on its node (its accepted share; MIG instances count none, as in KAI). */
function freedGpus(t: PodInfo): number {
  return t.req.kind === "mig" ? 0 : t.acceptedGpus;
}

export class IdleGpusFilter implements ScenarioFilter {
  readonly name = "AccumulatedIdleGpus";
  private readonly capacity = new Map<string, number>();
  /** The nodes with the most capacity, largest first, at most as many as pending tasks. */
  private top: string[] = [];
  private readonly required: number[];
  private readonly seen = new Set<string>();
  /** How much of the scenario's (append-only) victim lists was already taken in. */
  private recordedDone = 0;
  private potentialDone = 0;

  constructor(scenario: VictimScenario, nodes: readonly NodeInfo[]) {
    const n = scenario.pendingTasks.length;
    for (const node of nodes) {
      const cap = node.gpuIdleWithShared() + node.gpuReleasingWithShared();
      this.capacity.set(node.name, cap);
      if (this.top.length < n) this.top.push(node.name);
      else if (n === 0) continue;
      this.reposition(node.name, cap);
    }
    this.required = scenario.pendingTasks.map((t) => t.req.gpus).sort((a, b) => b - a);
    this.update(scenario);
  }

  private update(scenario: VictimScenario): void {
    const rec = scenario.recordedVictimTasks;
    const pot = scenario.potentialVictimTasks;
    for (; this.recordedDone < rec.length; this.recordedDone++) this.addVictim(rec[this.recordedDone]!);
    for (; this.potentialDone < pot.length; this.potentialDone++) this.addVictim(pot[this.potentialDone]!);
  }

  private addVictim(t: PodInfo): void {
    if (!t.nodeName || this.seen.has(t.uid)) return;
    this.seen.add(t.uid);
    if (!this.capacity.has(t.nodeName)) return;
    const cap = this.capacity.get(t.nodeName)! + freedGpus(t);
    this.capacity.set(t.nodeName, cap);
    this.reposition(t.nodeName, cap);
  }

  /** Keep `top` the largest capacities after `node` grew to `cap`. */
  private reposition(node: string, cap: number): void {
    const top = this.top;
    const at = top.indexOf(node);
    if (at < 0) {
      const last = top[top.length - 1];
      if (last === undefined || cap <= this.capacity.get(last)!) return;
      top[top.length - 1] = node;
    }
    let i = at < 0 ? top.length - 1 : at;
    while (i > 0 && this.capacity.get(top[i - 1]!)! < cap) {
      top[i] = top[i - 1]!;
      i--;
    }
    top[i] = node;
  }

  accepts(scenario: VictimScenario): boolean {
    this.update(scenario);
    const used = new Map<string, number>();
    for (const need of this.required) {
      if (need === 0) return true;
      let matched = false;
      for (const node of this.top) {
        const cap = this.capacity.get(node)!;
        if (cap < need) break;
        if (cap - (used.get(node) ?? 0) >= need) {
          used.set(node, (used.get(node) ?? 0) + need);
          matched = true;
          break;
        }
      }
      if (!matched) return false;
    }
    return true;
  }
}
