// stalegangeviction: a running gang that fell below its minimum (and is not finishing)
// is given a grace period, then all its placed pods are evicted so its resources are not
// held by a job that cannot run (KAI: actions/stalegangeviction).
import type { Action, Session } from "../../framework/session.js";
import { isActiveAllocated } from "../../api/status.js";

export const name = "stalegangeviction";

export function create(): Action {
  return { name, execute };
}

function execute(ssn: Session): void {
  const grace = ssn.params.stalenessGracePeriodSeconds;
  for (const job of ssn.jobs.values()) {
    if (!job.isStale) {
      job.staleSince = null;
      continue;
    }
    job.staleSince ??= ssn.now;
    if (grace < 0) continue;
    if (ssn.now - job.staleSince < grace * 1000) continue;
    const victims = job.pods.filter((p) => isActiveAllocated(p.status));
    const min = job.podSetList.map((ps) => ps.minAvailable).reduce((a, b) => a + b, 0);
    for (const p of victims)
      ssn.evictNow(
        p,
        name,
        `Pod ${p.namespace}/${p.name} was evicted: its gang fell below its minimum of ${min} pods`,
      );
  }
}
