// The clusters as the workers see them: one scheduling cycle each, and admission's candidates.
import type { PrismaClient } from "../db.js";

export interface ClusterSummary {
  name: string;
  labels: Record<string, string>;
  /** The agent reported its node inventory. */
  ready: boolean;
  cordoned: boolean;
}

export async function listClusters(prisma: PrismaClient): Promise<ClusterSummary[]> {
  const rows = await prisma.cluster.findMany({ orderBy: { name: "asc" } });
  return rows.map((c) => ({
    name: c.name,
    labels: c.labels as Record<string, string>,
    ready: c.state === "READY",
    cordoned: c.cordoned,
  }));
}
