// Recent usage per queue and cluster, decayed (domain/usage.ts), for the fair-share view.
import type { QuotaVector } from "../../core/index.js";
import type { PrismaClient } from "../db.js";
import { DEFAULT_USAGE_WINDOW, decayedAverage, type UsageBucket, type UsageWindow } from "../domain/usage.js";

/** `${queue}\u0000${cluster}` → decayed average allocation. Queues without history are absent. */
export async function recentUsage(
  prisma: PrismaClient,
  now: Date,
  clusters?: readonly string[],
  window: UsageWindow = DEFAULT_USAGE_WINDOW,
): Promise<Map<string, QuotaVector>> {
  const rows = await prisma.queueUsage.findMany({
    where: {
      bucketStart: { gte: new Date(now.getTime() - window.windowSeconds * 1000) },
      ...(clusters ? { clusterName: { in: [...clusters] } } : {}),
    },
  });
  const byKey = new Map<string, UsageBucket[]>();
  for (const r of rows) {
    const key = usageKey(r.queueName, r.clusterName);
    byKey.set(key, [...(byKey.get(key) ?? []), r]);
  }
  return new Map([...byKey].map(([k, buckets]) => [k, decayedAverage(buckets, now, window)]));
}

export const usageKey = (queue: string, cluster: string): string => `${queue}\u0000${cluster}`;
