// Which committed events call for work sooner than the timers: a cycle of the cluster they name,
// an admission pass, a fresh look at the cluster list. Events the workers write themselves (the
// scheduler's placements, pending reasons, cycle records) trigger nothing, or cycles would feed
// themselves.
import type { StoreEvent } from "../src/store/index.js";

export interface Triggers {
  /** Clusters whose cycle should run; "all" for changes every cluster's shares depend on. */
  cycles: string[] | "all";
  /** Clusters an agent reported on: their cycle runs if the report moved the cluster's
   * generation (a pod ended, a bind failed, an eviction finished), not for mere confirmations. */
  reported: string[];
  admission: boolean;
  clusterList: boolean;
  /** A gang restarted: the restart check may let it go (a backoff of 0). */
  restarts?: boolean;
}

/** The trigger reason of a cycle asked for by agent reports only. */
export const REPORT_TRIGGER = "report";
/** The trigger reason of the cycle that follows one stopped at its placement limit. */
export const PLACEMENT_LIMIT_TRIGGER = "placement-limit";

const NONE: Triggers = { cycles: [], reported: [], admission: false, clusterList: false };
const one = (c: string | null) => (c ? [c] : []);

export function triggersFor(e: StoreEvent): Triggers {
  switch (e.kind) {
    case "job.submitted":
      return { ...NONE, cycles: one(e.cluster), admission: !e.cluster };
    case "job.assigned":
    case "job.reassigned":
      return { ...NONE, cycles: one(e.cluster) };
    // Resources came free, or nodes changed: this cluster may place more, and admission may
    // find room for jobs that fit nowhere before.
    case "job.cancelled":
    case "nodes.reported":
      return { ...NONE, cycles: one(e.cluster), admission: true };
    // Pods a cluster no longer has freed their resources: place others at once.
    case "pods.vanished":
    case "cluster.ready":
      return { ...NONE, cycles: one(e.cluster), admission: true };
    case "job.restarted":
      return { ...NONE, restarts: true };
    case "cluster.lost":
      return { ...NONE, admission: true };
    case "pods.status":
    case "bind.result":
      return { ...NONE, reported: one(e.cluster), admission: true };
    case "cluster.registered":
    case "cluster.updated":
    case "cluster.cordoned":
    case "cluster.uncordoned":
    case "cluster.deleted":
      return { ...NONE, cycles: one(e.cluster), admission: true, clusterList: true };
    case "quota.set":
    case "queue.created":
    case "queue.updated":
    case "queue.deleted":
      return { ...NONE, cycles: "all", admission: true };
    default:
      return NONE;
  }
}
