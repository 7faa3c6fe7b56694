// Whether a cluster takes work: one definition for the API's views, admission and the cycles.
//   NOT_READY  registered; its agent has sent no node inventory yet
//   READY      its agent reports
//   LOST       its agent was silent for clusterLostAfter (marked by the workers' lost-cluster
//              check, markLostClusters); READY again after the agent's next complete report
import type { ClusterState } from "../types.js";

export type ClusterCondition = "NOT_READY" | "READY" | "LOST";

/** An agent silent this long loses its cluster (workers' clusterLostAfterMs). */
export const DEFAULT_CLUSTER_LOST_AFTER_MS = 120_000;

export function clusterCondition(state: ClusterState): ClusterCondition {
  return state === "REGISTERED" ? "NOT_READY" : state;
}

/** No admissions and no placements on a lost cluster. */
export const isLost = (state: ClusterState): boolean => clusterCondition(state) === "LOST";
