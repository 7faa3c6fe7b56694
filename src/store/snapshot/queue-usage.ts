// Time-based fair share: each queue's decayed recent usage on a cluster, as the proportion plugin
// wants it — a fraction of the cluster's capacity per resource (0.25 gpu = "held a quarter of the
// cluster's GPUs lately"). Read inside the snapshot's transaction so it matches the snapshot.
import type { QuotaVector } from "../../core/api/spec.js";
import type { Tx } from "../db.js";
import { decayedAverage, type UsageBucket, type UsageWindow } from "../domain/usage.js";

/** Capacity of the nodes the proportion plugin counts (ready ones). */
export interface ClusterCapacity {
  gpu: number;
  cpuMillis: number;
  memory: number;
}

export function readyCapacity(
  nodes: readonly { ready: boolean; gpus: number; cpuMillis: number; memory: bigint }[],
): ClusterCapacity {
  const c = { gpu: 0, cpuMillis: 0, memory: 0 };
  for (const n of nodes) {
    if (!n.ready) continue;
    c.gpu += n.gpus;
    c.cpuMillis += n.cpuMillis;
    c.memory += Number(n.memory);
  }
  return c;
}

const fraction = (used: number, capacity: number) => (capacity > 0 ? used / capacity : 0);

/** queue → decayed usage as a fraction of `capacity`. Queues without history are absent. */
export async function queueUsageFractions(
  tx: Tx,
  cluster: string,
  capacity: ClusterCapacity,
  now: Date,
  window: UsageWindow,
): Promise<Map<string, QuotaVector>> {
  const rows = await tx.queueUsage.findMany({
    where: {
      clusterName: cluster,
      bucketStart: { gte: new Date(now.getTime() - window.windowSeconds * 1000) },
    },
  });
  const byQueue = new Map<string, UsageBucket[]>();
  for (const r of rows) {
    const list = byQueue.get(r.queueName);
    if (list) list.push(r);
    else byQueue.set(r.queueName, [r]);
  }
  const out = new Map<string, QuotaVector>();
  for (const [queue, buckets] of byQueue) {
    const avg = decayedAverage(buckets, now, window);
    out.set(queue, {
      gpu: fraction(avg.gpu, capacity.gpu),
      cpuMillis: fraction(avg.cpuMillis, capacity.cpuMillis),
      memory: fraction(avg.memory, capacity.memory),
    });
  }
  return out;
}
