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
}
