// A queue's fair-share history on one cluster (domain/share-history.ts), oldest first.
import { prismaOf } from "../client.js";
import type { QuotaVector } from "../../core/index.js";
import type { ShareSample } from "../domain/share-history.js";
import { NotFoundError } from "../errors.js";
import type { Store } from "../store.js";

type Measure = "deserved" | "fair_share" | "allocated";
const MEASURES: [Measure, keyof ShareSample][] = [
  ["deserved", "deserved"],
  ["fair_share", "fairShare"],
  ["allocated", "allocated"],
];

/** A sample as the table's columns (snake case, as a raw insert names them). */
export function shareColumns(s: ShareSample): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [column, key] of MEASURES) {
    const v = s[key] as QuotaVector;
    out[`${column}_gpu`] = v.gpu;
    out[`${column}_cpu`] = v.cpuMillis;
    out[`${column}_mem`] = v.memory;
  }
  return out;
}

interface SampleRow {
  queueName: string;
  at: Date;
  spanSeconds: number;
  deservedGpu: number;
  deservedCpu: number;
  deservedMem: number;
  fairShareGpu: number;
  fairShareCpu: number;
  fairShareMem: number;
  allocatedGpu: number;
  allocatedCpu: number;
  allocatedMem: number;
}

export const sampleOfRow = (r: SampleRow): ShareSample => ({
  queue: r.queueName,
  at: r.at,
  spanSeconds: r.spanSeconds,
  deserved: { gpu: r.deservedGpu, cpuMillis: r.deservedCpu, memory: r.deservedMem },
  fairShare: { gpu: r.fairShareGpu, cpuMillis: r.fairShareCpu, memory: r.fairShareMem },
  allocated: { gpu: r.allocatedGpu, cpuMillis: r.allocatedCpu, memory: r.allocatedMem },
});

/** A sample as the row's fields (its queue and cluster aside). */
export const shareFields = (s: ShareSample): Omit<SampleRow, "queueName"> => ({
  at: s.at,
  spanSeconds: s.spanSeconds,
  deservedGpu: s.deserved.gpu,
  deservedCpu: s.deserved.cpuMillis,
  deservedMem: s.deserved.memory,
  fairShareGpu: s.fairShare.gpu,
  fairShareCpu: s.fairShare.cpuMillis,
  fairShareMem: s.fairShare.memory,
  allocatedGpu: s.allocated.gpu,
  allocatedCpu: s.allocated.cpuMillis,
  allocatedMem: s.allocated.memory,
});

/** The samples of `queue` on `cluster` taken from `from` to `to` (inclusive), oldest first; an
 * unknown queue or cluster is NotFoundError. */
export async function queueShareHistory(
  store: Store,
  q: { queue: string; cluster: string; from: Date; to: Date },
): Promise<ShareSample[]> {
  const [queue, cluster] = await Promise.all([
    prismaOf(store).queue.findUnique({ where: { name: q.queue }, select: { name: true } }),
    prismaOf(store).cluster.findUnique({ where: { name: q.cluster }, select: { name: true } }),
  ]);
  if (!queue) throw new NotFoundError("queue", q.queue, "queue");
  if (!cluster) throw new NotFoundError("cluster", q.cluster, "cluster");
  const rows = await prismaOf(store).queueShareSample.findMany({
    where: { queueName: q.queue, clusterName: q.cluster, at: { gte: q.from, lte: q.to } },
    orderBy: { at: "asc" },
  });
  return rows.map(sampleOfRow);
}
