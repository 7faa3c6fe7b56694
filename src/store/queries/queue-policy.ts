// Queues' effective namespaces, pod-security level and pod allow-lists (see domain/queue-policy.ts).
import { prismaOf } from "../client.js";
import type { PrismaClient, Tx } from "../db.js";
import {
  effectivePolicies,
  effectivePolicy,
  type QueuePolicy,
  type QueuePolicyRow,
} from "../domain/queue-policy.js";
import type { Store } from "../store.js";
import type { PodSecurityLevel } from "../validation/pod-security/index.js";

interface PolicySqlRow {
  name: string;
  parent_name: string | null;
  namespaces: string[] | null;
  pod_security: PodSecurityLevel | null;
  default_request: unknown;
  pod_policy: unknown;
}

const policyRow = (r: PolicySqlRow): QueuePolicyRow & { podPolicy: unknown } => ({
  name: r.name,
  parentName: r.parent_name,
  namespaces: r.namespaces ?? [],
  podSecurity: r.pod_security,
  defaultRequest: r.default_request,
  podPolicy: r.pod_policy,
});

/** The policy of one queue, its ancestors read in one statement; null when it does not exist. */
export async function queuePolicy(prisma: PrismaClient | Tx, queue: string): Promise<QueuePolicy | null> {
  return (await versionedQueuePolicy(prisma, queue))?.policy ?? null;
}

/** The queue rows a policy was read from, each with the transaction that last wrote it. */
export type PolicyVersion = { name: string; xid: string }[];

/** A queue's policy with the version of every row it comes from, so that a write can check, in
 * its own statement, that the policy still holds (see insertJob); null when it does not exist. */
export async function versionedQueuePolicy(
  prisma: PrismaClient | Tx,
  queue: string,
): Promise<{ policy: QueuePolicy; version: PolicyVersion } | null> {
  const rows = await prisma.$queryRaw<(PolicySqlRow & { xid: string })[]>`
    WITH RECURSIVE up AS (
      SELECT name, parent_name, namespaces, pod_security, default_request, pod_policy, change_xid, 0 AS depth
      FROM queue WHERE name = ${queue}
      UNION ALL
      SELECT q.name, q.parent_name, q.namespaces, q.pod_security, q.default_request, q.pod_policy, q.change_xid,
        up.depth + 1
      FROM queue q JOIN up ON q.name = up.parent_name
      WHERE up.depth < 1000
    )
    SELECT name, parent_name, namespaces, pod_security::text AS pod_security, default_request, pod_policy,
      change_xid::text AS xid
    FROM up ORDER BY depth`;
  if (!rows.length) return null;
  return {
    policy: effectivePolicy(rows.map(policyRow)),
    version: rows.map((r) => ({ name: r.name, xid: r.xid })),
  };
}

/** A read that found a queue whose parent it did not lock (the tree moved meanwhile) reads again. */
const MAX_LOCKED_READS = 5;

/**
 * The effective policies of `queues` (those that exist), for a transaction that stores jobs: the
 * rows of the queues and of their ancestors are locked FOR SHARE until it ends. A policy change
 * (updateQueue's UPDATE of one of these rows) either committed before, and this read sees it, or
 * waits for the transaction: what is checked is what holds when the jobs are stored. One
 * statement, whatever the number of queues.
 */
export async function lockedQueuePolicies(
  tx: Tx,
  queues: readonly string[],
): Promise<Map<string, QueuePolicy>> {
  const names = [...new Set(queues)];
  for (let read = 1; ; read++) {
    const rows = await tx.$queryRaw<PolicySqlRow[]>`
      WITH RECURSIVE up AS (
        SELECT name, parent_name FROM queue WHERE name = ANY(${names}::text[])
        UNION
        SELECT q.name, q.parent_name FROM queue q JOIN up ON q.name = up.parent_name
      )
      SELECT q.name, q.parent_name, q.namespaces, q.pod_security::text AS pod_security, q.default_request,
        q.pod_policy
      FROM queue q WHERE q.name IN (SELECT name FROM up)
      ORDER BY q.name
      FOR SHARE OF q`;
    const locked = new Set(rows.map((r) => r.name));
    // Rows locked after waiting are their newest versions: a move meanwhile shows as a parent
    // outside the set read.
    if (read < MAX_LOCKED_READS && rows.some((r) => r.parent_name !== null && !locked.has(r.parent_name)))
      continue;
    const all = effectivePolicies(rows.map(policyRow));
    return new Map(names.flatMap((q) => (all.has(q) ? [[q, all.get(q)!] as const] : [])));
  }
}

/** Every queue's effective policy. */
export async function queuePolicies(store: Store): Promise<Map<string, QueuePolicy>> {
  const rows = await prismaOf(store).queue.findMany({
    select: {
      name: true,
      parentName: true,
      namespaces: true,
      podSecurity: true,
      defaultRequest: true,
      podPolicy: true,
    },
  });
  return effectivePolicies(rows as QueuePolicyRow[]);
}
