// The clusters as the workers see them: one scheduling cycle each, and admission's candidates.
import { prismaOf } from "../client.js";
import { type ClusterPodPolicy, clusterPodPolicyOf } from "../validation/pod-policy.js";
import type { Store } from "../store.js";
import { isLost } from "../domain/cluster-state.js";

export interface ClusterSummary {
  name: string;
  labels: Record<string, string>;
  /** The agent reported its node inventory. */
  ready: boolean;
  /** Its agent went silent (domain/cluster-state): no admissions or placements there. */
  lost: boolean;
  cordoned: boolean;
  /** What its pods may ask for beyond cpu, memory and nvidia.com/gpu. */
  podPolicy: ClusterPodPolicy;
}

/** Every cluster's name, state, labels and pod policy, by name. */
export async function clusterSummaries(store: Store): Promise<ClusterSummary[]> {
  const rows = await prismaOf(store).cluster.findMany({ orderBy: { name: "asc" } });
  return rows.map((c) => ({
    name: c.name,
    labels: c.labels as Record<string, string>,
    ready: c.state === "READY",
    lost: isLost(c.state),
    cordoned: c.cordoned,
    podPolicy: clusterPodPolicyOf(c.podPolicy),
  }));
}

/** Whether the cluster is LOST now (its cycles place nothing). */
export async function clusterIsLost(store: Store, cluster: string): Promise<boolean> {
  const row = await prismaOf(store).cluster.findUnique({ where: { name: cluster }, select: { state: true } });
  return row ? isLost(row.state) : false;
}
