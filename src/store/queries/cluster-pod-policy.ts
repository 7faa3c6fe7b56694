// The pod policies of the clusters jobs name at submit (a job naming none is held to its cluster's
// at admission).
import type { PrismaClient, Tx } from "../db.js";
import { type ClusterPodPolicy, clusterPodPolicyOf } from "../validation/pod-policy.js";

/** Each named cluster's pod policy (clusters that do not exist are left out: the insert refuses
 * them with its own error). */
export async function clusterPodPolicies(
  db: PrismaClient | Tx,
  names: readonly (string | null | undefined)[],
): Promise<Map<string, ClusterPodPolicy>> {
  const wanted = [...new Set(names.filter((n): n is string => typeof n === "string" && n !== ""))];
  if (!wanted.length) return new Map();
  const rows = await db.cluster.findMany({
    where: { name: { in: wanted } },
    select: { name: true, podPolicy: true },
  });
  return new Map(rows.map((r) => [r.name, clusterPodPolicyOf(r.podPolicy)]));
}
