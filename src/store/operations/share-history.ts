// Fair-share history: the worker that records a cluster's usage samples each queue's deserved
// share, fair share and allocation there; old minutes are folded into hours, hours past the week
// dropped, all in the sample's transaction. No events: bookkeeping, not a change.
import { prismaOf } from "../client.js";
import {
  foldBefore,
  foldToHours,
  historyHorizon,
  SHARE_SAMPLE_SECONDS,
  type ShareMeasures,
  type ShareSample,
  sampleMinute,
} from "../domain/share-history.js";
import { sampleOfRow, shareColumns, shareFields } from "../queries/share-history.js";
import type { Store } from "../store.js";

export interface QueueSharesRecord {
  cluster: string;
  at: Date;
  queues: (ShareMeasures & { queue: string })[];
}

export async function recordQueueShares(store: Store, r: QueueSharesRecord): Promise<void> {
  const minute = sampleMinute(r.at);
  const rows = r.queues.map((q) => ({
    queue_name: q.queue,
    ...shareColumns({ ...q, at: minute, spanSeconds: SHARE_SAMPLE_SECONDS }),
  }));
  const cutoff = foldBefore(r.at);
  await prismaOf(store).$transaction(async (tx) => {
    if (rows.length) {
      // Queues deleted meanwhile are skipped by the join rather than failing the whole sample.
      await tx.$executeRaw`
        INSERT INTO queue_share_sample (queue_name, cluster_name, at, span_seconds,
          deserved_gpu, deserved_cpu, deserved_mem, fair_share_gpu, fair_share_cpu, fair_share_mem,
          allocated_gpu, allocated_cpu, allocated_mem)
        SELECT v.queue_name, ${r.cluster}, ${minute}, ${SHARE_SAMPLE_SECONDS},
          v.deserved_gpu, v.deserved_cpu, v.deserved_mem, v.fair_share_gpu, v.fair_share_cpu, v.fair_share_mem,
          v.allocated_gpu, v.allocated_cpu, v.allocated_mem
        FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS v(queue_name text,
          deserved_gpu float8, deserved_cpu float8, deserved_mem float8,
          fair_share_gpu float8, fair_share_cpu float8, fair_share_mem float8,
          allocated_gpu float8, allocated_cpu float8, allocated_mem float8)
        JOIN queue q ON q.name = v.queue_name
        ON CONFLICT (queue_name, cluster_name, at) DO UPDATE SET
          deserved_gpu = excluded.deserved_gpu, deserved_cpu = excluded.deserved_cpu,
          deserved_mem = excluded.deserved_mem, fair_share_gpu = excluded.fair_share_gpu,
          fair_share_cpu = excluded.fair_share_cpu, fair_share_mem = excluded.fair_share_mem,
          allocated_gpu = excluded.allocated_gpu, allocated_cpu = excluded.allocated_cpu,
          allocated_mem = excluded.allocated_mem`;
    }
    const due = { clusterName: r.cluster, spanSeconds: SHARE_SAMPLE_SECONDS, at: { lt: cutoff } };
    const minutes = await tx.queueShareSample.findMany({ where: due });
    if (minutes.length) {
      const hours: ShareSample[] = foldToHours(minutes.map(sampleOfRow));
      await tx.queueShareSample.deleteMany({ where: due });
      await tx.queueShareSample.createMany({
        data: hours.map((h) => ({ queueName: h.queue, clusterName: r.cluster, ...shareFields(h) })),
        skipDuplicates: true,
      });
    }
    await tx.queueShareSample.deleteMany({
      where: { clusterName: r.cluster, at: { lt: historyHorizon(r.at) } },
    });
  });
}
