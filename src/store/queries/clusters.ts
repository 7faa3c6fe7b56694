// The clusters as the workers see them: one scheduling cycle each, and admission's candidates.
import { type ClusterPodPolicy, clusterPodPolicyOf } from "../validation/pod-policy.js";
import type { PrismaClient } from "../db.js";
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

export async function listClusters(prisma: PrismaClient): Promise<ClusterSummary[]> {
  const rows = await prisma.cluster.findMany({ orderBy: { name: "asc" } });
  return rows.map((c) => ({
    name: c.name,
    labels: c.labels as Record<string, string>,
    ready: c.state === "READY",
    lost: isLost(c.state),
    cordoned: c.cordoned,
    podPolicy: clusterPodPolicyOf(c.podPolicy),
  }));
}

/** The cluster's fencing generation now (null when it does not exist). */
export async function clusterGeneration(prisma: PrismaClient, cluster: string): Promise<number | null> {
  const row = await prisma.cluster.findUnique({ where: { name: cluster }, select: { generation: true } });
  return row ? Number(row.generation) : null;
}

/** Whether the cluster is LOST now (its cycles place nothing). */
export async function clusterIsLost(store: Store, cluster: string): Promise<boolean> {
  const row = await store.prisma.cluster.findUnique({ where: { name: cluster }, select: { state: true } });
  return row ? isLost(row.state) : false;
}

/** Whether any pod of the cluster's unfinished jobs waits to be placed (PENDING or PIPELINED). */
export async function hasPendingPods(prisma: PrismaClient, cluster: string): Promise<boolean> {
  const rows = await prisma.$queryRaw<{ pending: boolean }[]>`
    SELECT EXISTS (
      SELECT 1 FROM pod p JOIN job j ON j.id = p.job_id
      WHERE j.cluster_name = ${cluster} AND j.state IN ('PENDING', 'ADMITTED', 'RUNNING')
        AND p.state IN ('PENDING', 'PIPELINED')
    ) AS pending`;
  return rows[0]?.pending ?? false;
}
