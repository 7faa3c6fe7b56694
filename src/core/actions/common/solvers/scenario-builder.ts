// Accumulated scenarios for one partial preemptor (KAI: solvers/pod_scenario_builder.go):
// first the recorded victims alone, then victim jobs taken one at a time from the victim
// queue and added to what came before. A victim job contributes the pods tasksToEvict
// picks; the rest of it goes back into the queue as a copy, to be taken later. Scenarios
// failing a cheap filter are skipped without simulation.
import type { NodeInfo } from "../../../api/node-info.js";
import type { PodInfo } from "../../../api/pod-info.js";
import type { JobInfo } from "../../../api/podgroup-info.js";
import type { Session } from "../../../framework/session.js";
import { tasksToAllocate } from "../../../framework/tasks-to-allocate.js";
import type { JobsOrderByQueues } from "../jobs-order-by-queues.js";
import { IdleGpusFilter, type NodeGpuCapacity } from "./filters/idle-gpus.js";
import { NodeAffinitiesFilter } from "./filters/node-affinities.js";
import type { ScenarioFilter } from "./filters/scenario-filter.js";
import { copyJobWithPods } from "./job-copies.js";
import { tasksToEvict } from "./tasks-to-evict.js";
import { type VictimGroup, VictimScenario } from "./victim-scenario.js";

export class ScenarioBuilder {
  private readonly scenario: VictimScenario;
  private readonly recordedTaskIds = new Set<string>();
  private readonly filters: ScenarioFilter[] = [];

  constructor(
    private readonly ssn: Session,
    partial: JobInfo,
    recorded: readonly VictimGroup[],
    private readonly victimsQueue: JobsOrderByQueues,
    feasible: ReadonlyMap<string, NodeInfo>,
    /** GPUs per node before any victim (the same for every prefix of an attempt). */
    gpuCapacity: NodeGpuCapacity,
  ) {
    const tasks = tasksToAllocate(ssn, partial, false);
    if (tasks.length === 0) throw new Error(`scenario builder: job ${partial.name} has no task to place`);
    this.scenario = new VictimScenario(ssn, partial, tasks, recorded);
    for (const g of recorded) for (const t of g) this.recordedTaskIds.add(t.uid);
    const affinity = NodeAffinitiesFilter.create(ssn, this.scenario, feasible);
    if (affinity) this.filters.push(affinity);
    this.filters.push(new IdleGpusFilter(this.scenario, ssn, gpuCapacity));
  }

  /** The scenario with the recorded victims only, or the first accumulated one that passes the filters. */
  first(): VictimScenario | null {
    return this.passes() ? this.scenario : this.next();
  }

  /** The next accumulated scenario that passes the filters, or null when the victims ran out. */
  next(): VictimScenario | null {
    while (!this.victimsQueue.isEmpty) {
      if (!this.addNextVictim()) continue;
      if (this.passes()) return this.scenario;
    }
    return null;
  }

  private passes(): boolean {
    // A filter skipped here catches up on the victims it missed the next time it is asked.
    for (const f of this.filters) if (!f.accepts(this.scenario)) return false;
    return true;
  }

  /** Take the next victim job's pods into the scenario; false when it only re-queued a remainder. */
  private addNextVictim(): boolean {
    const job = this.victimsQueue.popNextJob();
    if (!job) return false;
    const { tasks, hasMore } = tasksToEvict(this.ssn, job);
    if (tasks.some((t) => this.recordedTaskIds.has(t.uid))) {
      // Already a recorded victim: look at the job again without those pods (elastic jobs).
      const rest = job.pods.filter((p) => !this.recordedTaskIds.has(p.uid));
      if (rest.length > 0) this.victimsQueue.pushJob(copyJobWithPods(job, rest));
      return false;
    }
    if (hasMore) {
      const taken = new Set<PodInfo>(tasks);
      this.victimsQueue.pushJob(
        copyJobWithPods(
          job,
          job.pods.filter((p) => !taken.has(p)),
        ),
      );
    }
    this.scenario.addPotentialVictims(tasks);
    return true;
  }
}
