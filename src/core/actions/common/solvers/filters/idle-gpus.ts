// Cheap pre-check of an accumulated scenario (KAI: accumulated_scenario_filters/idle_gpus):
// can the pending tasks' GPUs be matched, largest first and greedily, onto the N nodes
// with the most idle+releasing GPUs once the scenario's victims are gone (N = number of
// pending tasks)? Greedy matching can reject a scenario a cleverer packing would fit;
// KAI skips those too, so this is kept exact rather than "improved".
import type { PodInfo } from "../../../../api/pod-info.js";
import type { Session } from "../../../../framework/session.js";
import { nodeGpus } from "../node-gpus.js";
import type { VictimScenario } from "../victim-scenario.js";
import type { ScenarioFilter } from "./scenario-filter.js";

/** GPUs a victim frees on its node (its accepted share; MIG instances count none, as in KAI). */
function freedGpus(t: PodInfo): number {
  return t.req.kind === "mig" ? 0 : t.acceptedGpus;
}

/**
 * Idle+releasing GPUs per node before any victim, and the nodes with the most, as many as
 * asked: what every prefix of one attempt starts its filter from (they share the session state).
 */
export class NodeGpuCapacity {
  /** By node index. */
  readonly capacity: Float64Array;
  /** Node indices, most capacity first, ties by index (so the first n are the top n). */
  readonly top: number[] = [];

  constructor(ssn: Session, most: number) {
    const { idle, releasing } = nodeGpus(ssn);
    this.capacity = new Float64Array(idle.length);
    for (let i = 0; i < idle.length; i++) {
      this.capacity[i] = idle[i]! + releasing[i]!;
      if (this.top.length < most) {
        this.top.push(i);
        bubble(this.top, this.capacity, this.top.length - 1);
      } else if (most > 0 && this.capacity[i]! > this.capacity[this.top[most - 1]!]!) {
        this.top[most - 1] = i;
        bubble(this.top, this.capacity, most - 1);
      }
    }
  }
}

/** Move the entry at `at` left past entries with less capacity. */
function bubble(top: number[], capacity: Float64Array, at: number): void {
  const i = top[at]!;
  const cap = capacity[i]!;
  while (at > 0 && capacity[top[at - 1]!]! < cap) {
    top[at] = top[at - 1]!;
    at--;
  }
  top[at] = i;
}

export class IdleGpusFilter implements ScenarioFilter {
  readonly name = "AccumulatedIdleGpus";
  /** Idle+releasing GPUs by node index, plus what the scenario's victims free. */
  private readonly capacity: Float64Array;
  /** Indices of the nodes with the most capacity, largest first, at most as many as pending tasks. */
  private readonly top: number[];
  private readonly required: number[];
  private readonly seen = new Set<string>();
  /** How much of the scenario's (append-only) victim lists was already taken in. */
  private recordedDone = 0;
  private potentialDone = 0;

  /** `base`: taken for at least as many nodes as the scenario has pending tasks. */
  constructor(
    scenario: VictimScenario,
    private readonly ssn: Session,
    base: NodeGpuCapacity,
  ) {
    const n = scenario.pendingTasks.length;
    if (base.top.length < n && base.top.length < base.capacity.length)
      throw new Error(`idle-GPU filter: base capacity kept for ${base.top.length} nodes, ${n} needed`);
    this.capacity = base.capacity.slice();
    this.top = base.top.slice(0, n);
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
    const freed = freedGpus(t);
    // A pod freeing no GPU changes nothing, however often it is seen (most victims of a GPU search are CPU pods).
    if (freed === 0 || !t.nodeName || this.seen.has(t.uid)) return;
    this.seen.add(t.uid);
    const node = this.ssn.nodeByName.get(t.nodeName);
    if (!node) return;
    this.capacity[node.index]! += freed;
    this.reposition(node.index);
  }

  /** Keep `top` the largest capacities after node `i` grew. */
  private reposition(i: number): void {
    const top = this.top;
    const at = top.indexOf(i);
    if (at >= 0) {
      bubble(top, this.capacity, at);
      return;
    }
    const last = top[top.length - 1];
    if (last === undefined || this.capacity[i]! <= this.capacity[last]!) return;
    top[top.length - 1] = i;
    bubble(top, this.capacity, top.length - 1);
  }

  accepts(scenario: VictimScenario): boolean {
    this.update(scenario);
    const used = new Map<number, number>();
    for (const need of this.required) {
      if (need === 0) return true;
      let matched = false;
      for (const i of this.top) {
        const cap = this.capacity[i]!;
        if (cap < need) break;
        if (cap - (used.get(i) ?? 0) >= need) {
          used.set(i, (used.get(i) ?? 0) + need);
          matched = true;
          break;
        }
      }
      if (!matched) return false;
    }
    return true;
  }
}
