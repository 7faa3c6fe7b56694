// Virtual eviction of victim pods inside a solver's statement, with the message each
// victim's job will carry (KAI: actions/common/action.go EvictAllPreemptees).
import type { PodInfo } from "../../../api/pod-info.js";
import type { JobInfo } from "../../../api/podgroup-info.js";
import type { ActionName } from "../../../api/result.js";
import type { Session } from "../../../framework/session.js";
import type { Statement } from "../../../framework/statement.js";

/** "Pod ns/name was … for ns/preemptor": every message names the job it made room for. */
export function evictionMessage(
  ssn: Session,
  action: ActionName,
  victim: PodInfo,
  preemptor: JobInfo,
): string {
  const pod = `${victim.namespace}/${victim.name}`;
  const by = `${preemptor.namespace}/${preemptor.name}`;
  switch (action) {
    case "preempt":
      return `Pod ${pod} was preempted for ${by}, a higher priority workload of its queue`;
    case "consolidation":
      return `Pod ${pod} was moved to consolidate resources for ${by}`;
    case "reclaim":
      return `Pod ${pod} was reclaimed from queue ${ssn.jobOf(victim).queue} for ${by} of queue ${preemptor.queue}`;
    default:
      return `Pod ${pod} was evicted by ${action} for ${by}`;
  }
}

export function evictVictims(
  ssn: Session,
  stmt: Statement,
  tasks: readonly PodInfo[],
  preemptor: JobInfo,
  action: ActionName,
): void {
  // A recorded victim is listed again with its job's new pods; KAI evicts it a second time
  // (a duplicate eviction, and one that outlives an un-evict). Once is enough.
  // A withdrawn nomination (Pending again) has nothing left to evict either.
  for (const t of tasks)
    if (t.status !== "Releasing" && t.status !== "Pending")
      stmt.evict(t, evictionMessage(ssn, action, t, preemptor));
}
