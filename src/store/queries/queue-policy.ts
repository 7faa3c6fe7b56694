// Queues' effective namespace and pod-security policy (see domain/queue-policy.ts).
import type { PrismaClient, Tx } from "../db.js";
import {
  effectivePolicies,
  effectivePolicy,
  type QueuePolicy,
  type QueuePolicyRow,
} from "../domain/queue-policy.js";
import type { Store } from "../store.js";
import type { PodSecurityLevel } from "../validation/pod-security/index.js";

/** The policy of one queue, its ancestors read in one statement; null when it does not exist. */
export async function queuePolicy(prisma: PrismaClient | Tx, queue: string): Promise<QueuePolicy | null> {
  const rows = await prisma.$queryRaw<
    {
      name: string;
      parent_name: string | null;
      namespaces: string[] | null;
      pod_security: PodSecurityLevel | null;
      default_request: unknown;
    }[]
  >`
    WITH RECURSIVE up AS (
      SELECT name, parent_name, namespaces, pod_security, default_request, 0 AS depth FROM queue WHERE name = ${queue}
      UNION ALL
      SELECT q.name, q.parent_name, q.namespaces, q.pod_security, q.default_request, up.depth + 1
      FROM queue q JOIN up ON q.name = up.parent_name
      WHERE up.depth < 1000
    )
    SELECT name, parent_name, namespaces, pod_security::text AS pod_security, default_request FROM up ORDER BY depth`;
  if (!rows.length) return null;
  return effectivePolicy(
    rows.map((r) => ({
      name: r.name,
      parentName: r.parent_name,
      namespaces: r.namespaces ?? [],
      podSecurity: r.pod_security,
      defaultRequest: r.default_request,
    })),
  );
}

/** Every queue's effective policy. */
export async function queuePolicies(store: Store): Promise<Map<string, QueuePolicy>> {
  const rows = await store.prisma.queue.findMany({
    select: { name: true, parentName: true, namespaces: true, podSecurity: true, defaultRequest: true },
  });
  return effectivePolicies(rows as QueuePolicyRow[]);
}
