// Usage history: a scheduling cycle records what each queue held on the cluster since the last
// record (the allocation × the seconds it was held). No events: this is bookkeeping, not a change.
import { prismaOf } from "../client.js";
import type { QuotaVector } from "../../core/index.js";
import { bucketStart, DEFAULT_USAGE_WINDOW, type UsageWindow } from "../domain/usage.js";
import type { Store } from "../store.js";

export interface UsageRecord {
  cluster: string;
  /** End of the interval the allocations were held. */
  at: Date;
  seconds: number;
  queues: { queue: string; allocated: QuotaVector }[];
}

export async function recordQueueUsage(
  store: Store,
  r: UsageRecord,
  window: UsageWindow = DEFAULT_USAGE_WINDOW,
): Promise<void> {
  const rows = r.queues
    .filter((q) => q.allocated.gpu > 0 || q.allocated.cpuMillis > 0 || q.allocated.memory > 0)
    .map((q) => ({
      queue: q.queue,
      gpu: q.allocated.gpu * r.seconds,
      cpu: q.allocated.cpuMillis * r.seconds,
      mem: q.allocated.memory * r.seconds,
    }));
  const bucket = bucketStart(r.at);
  const horizon = new Date(r.at.getTime() - window.windowSeconds * 1000);
  await prismaOf(store).$transaction(async (tx) => {
    if (rows.length) {
      // Queues deleted meanwhile are skipped by the join rather than failing the whole record.
      await tx.$executeRaw`
        INSERT INTO queue_usage (queue_name, cluster_name, bucket_start, gpu_seconds, cpu_milli_seconds, memory_byte_seconds)
        SELECT v.queue, ${r.cluster}, ${bucket}, v.gpu, v.cpu, v.mem
        FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS v(queue text, gpu float8, cpu float8, mem float8)
        JOIN queue q ON q.name = v.queue
        ON CONFLICT (queue_name, cluster_name, bucket_start) DO UPDATE SET
          gpu_seconds = queue_usage.gpu_seconds + excluded.gpu_seconds,
          cpu_milli_seconds = queue_usage.cpu_milli_seconds + excluded.cpu_milli_seconds,
          memory_byte_seconds = queue_usage.memory_byte_seconds + excluded.memory_byte_seconds`;
    }
    await tx.queueUsage.deleteMany({ where: { clusterName: r.cluster, bucketStart: { lt: horizon } } });
  });
}
