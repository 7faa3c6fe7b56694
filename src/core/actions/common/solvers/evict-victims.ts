// Virtual eviction of victim pods inside a solver's statement, with the message each
// victim's job will carry (KAI: actions/common/action.go EvictAllPreemptees).
import type { PodInfo } from "../../../api/pod-info.js";
import type { JobInfo } from "../../../api/podgroup-info.js";
import type { ActionName } from "../../../api/result.js";
import type { Session } from "../../../framework/session.js";
import type { Statement } from "../../../framework/statement.js";

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
      return `Pod ${pod} was preempted by higher priority workload ${by}`;
    case "consolidation":
      return `Pod ${pod} was evicted to consolidate resources (it is re-placed on another node)`;
    case "reclaim": {
      const vq = ssn.jobOf(victim).queue;
      return `Pod ${pod} was reclaimed by ${by}: queue ${preemptor.queue} reclaims resources from queue ${vq}`;
    }
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
  for (const t of tasks) stmt.evict(t, evictionMessage(ssn, action, t, preemptor));
}
