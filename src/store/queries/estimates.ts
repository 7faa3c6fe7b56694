// What the start-time estimator reads besides the cluster's snapshot (the run times jobs declare,
// each queue's recent run times), and the estimates the API shows.
import { prismaOf } from "../client.js";
import type { Store } from "../store.js";

export interface JobEstimate {
  jobId: string;
  cluster: string | null;
  start: Date | null;
  computedAt: Date;
}

/** The stored estimates of these jobs. */
export async function jobEstimatesOf(store: Store, ids: readonly string[]): Promise<JobEstimate[]> {
  if (!ids.length) return [];
  const rows = await prismaOf(store).jobEstimate.findMany({ where: { jobId: { in: [...ids] } } });
  return rows.map((r) => ({
    jobId: r.jobId,
    cluster: r.clusterName,
    start: r.estimatedStart,
    computedAt: r.computedAt,
  }));
}

/** How many of a queue's most recent successful jobs make its running estimate, and how far back. */
export const QUEUE_RUNTIME_SAMPLE = 50;
export const QUEUE_RUNTIME_DAYS = 7;

/**
 * Per queue, the run times (seconds, started → finished) of its last QUEUE_RUNTIME_SAMPLE jobs
 * that SUCCEEDED in the last QUEUE_RUNTIME_DAYS days, newest first: the estimator's running
 * estimate for jobs that declare no run time. Queues without such jobs are absent.
 */
export async function queueRuntimeSamples(store: Store, now = new Date()): Promise<Map<string, number[]>> {
  const since = new Date(now.getTime() - QUEUE_RUNTIME_DAYS * 86_400_000);
  const rows = await prismaOf(store).$queryRaw<{ queue: string; seconds: number }[]>`
    SELECT queue_name AS queue, seconds
    FROM (
      SELECT queue_name, extract(epoch FROM finished_at - started_at)::float8 AS seconds,
             row_number() OVER (PARTITION BY queue_name ORDER BY finished_at DESC) AS n
      FROM job
      WHERE state = 'SUCCEEDED' AND started_at IS NOT NULL AND finished_at >= ${since}
    ) recent
    WHERE n <= ${QUEUE_RUNTIME_SAMPLE}
    ORDER BY queue_name, n`;
  const out = new Map<string, number[]>();
  for (const r of rows) {
    const list = out.get(r.queue) ?? [];
    list.push(Number(r.seconds));
    out.set(r.queue, list);
  }
  return out;
}

/** The run times these jobs declare (seconds; null = not declared). */
export async function jobRuntimeHints(
  store: Store,
  ids: readonly string[],
): Promise<Map<string, { expectedSeconds: number | null; maxSeconds: number | null }>> {
  if (!ids.length) return new Map();
  const rows = await prismaOf(store).job.findMany({
    where: { id: { in: [...ids] } },
    select: { id: true, expectedRuntimeSeconds: true, maxRuntimeSeconds: true },
  });
  return new Map(
    rows.map((r) => [r.id, { expectedSeconds: r.expectedRuntimeSeconds, maxSeconds: r.maxRuntimeSeconds }]),
  );
}
