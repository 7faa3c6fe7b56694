// What the victim solvers hand to scenario validators: the preemptor, the tasks it
// would place, and the victims it would evict.
import type { JobInfo } from "../api/podgroup-info.js";
import type { PodInfo } from "../api/pod-info.js";

export interface Victim {
  job: JobInfo;
  tasks: PodInfo[];
}

export interface Scenario {
  preemptor: JobInfo;
  pendingTasks: readonly PodInfo[];
  victims: readonly Victim[];
  /**
   * The victims (in `victims` order) that may hold a pod not active-allocated: moved or
   * evicted by this simulation, or not all running before it. Every pod of the others is
   * active-allocated. A validator that only counts pods that left may look at these alone
   * (a large accumulated scenario has thousands of untouched victims). Absent: unknown.
   */
  affected?: readonly Victim[];
}
