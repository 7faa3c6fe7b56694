// Queue limits and non-preemptible quota, checked for a job's attempt and for one task on
// one node, for the queue and every ancestor (KAI: plugins/proportion/capacity_policy).
import type { SchedulableResult } from "../../framework/callbacks.js";
import type { JobInfo } from "../../api/podgroup-info.js";
import { type Quantities, type QueueShare, RESOURCES, type ResourceName, UNLIMITED } from "./queue-share.js";

const UNITS: Record<ResourceName, (v: number) => string> = {
  gpu: (v) => `${+v.toFixed(3)} GPUs`,
  cpu: (v) => `${+(v / 1000).toFixed(3)} CPU cores`,
  memory: (v) => `${+(v / 1e9).toFixed(3)} GB memory`,
};

function overLimit(q: QueueShare, req: Quantities): ResourceName | null {
  for (const r of RESOURCES) {
    const s = q.shares[r];
    if (s.maxAllowed === UNLIMITED || !req[r]) continue;
    if (s.maxAllowed < s.allocated + req[r]) return r;
  }
  return null;
}

function nonPreemptibleOverQuota(q: QueueShare, req: Quantities): ResourceName | null {
  for (const r of RESOURCES) {
    const s = q.shares[r];
    if (s.deserved === UNLIMITED || !req[r]) continue;
    if (s.deserved < s.allocatedNotPreemptible + req[r]) return r;
  }
  return null;
}

export class CapacityPolicy {
  /** `chainOf(queue)`: the queue and its ancestors, leaf first. */
  constructor(private readonly chainOf: (queue: string) => QueueShare[]) {}

  private chain(job: JobInfo): QueueShare[] {
    return this.chainOf(job.queue);
  }

  checkLimit(job: JobInfo, req: Quantities): SchedulableResult {
    for (const q of this.chain(job)) {
      const r = overLimit(q, req);
      if (r) {
        const s = q.shares[r];
        return {
          schedulable: false,
          reason: "OverLimit",
          message:
            `${q.name} quota has reached the allowable limit of ${UNITS[r](s.maxAllowed)}. ` +
            `Limit is ${UNITS[r](s.maxAllowed)}, currently ${UNITS[r](s.allocated)} allocated and workload requested ${UNITS[r](req[r])}`,
        };
      }
    }
    return { schedulable: true };
  }

  checkNonPreemptibleQuota(job: JobInfo, req: Quantities): SchedulableResult {
    if (job.preemptible) return { schedulable: true };
    for (const q of this.chain(job)) {
      const r = nonPreemptibleOverQuota(q, req);
      if (r) {
        const s = q.shares[r];
        return {
          schedulable: false,
          reason: "NonPreemptibleOverQuota",
          message:
            `Non-preemptible workload is over quota. Workload requested ${UNITS[r](req[r])}, but ${q.name} quota is ` +
            `${UNITS[r](s.deserved)}, while ${UNITS[r](s.allocatedNotPreemptible)} are being used by non-preemptible workloads`,
        };
      }
    }
    return { schedulable: true };
  }

  /** Limits first, then the non-preemptible quota. */
  check(job: JobInfo, req: Quantities): SchedulableResult {
    const l = this.checkLimit(job, req);
    return l.schedulable ? this.checkNonPreemptibleQuota(job, req) : l;
  }
}
