// Estimated starts of pending jobs, as the workers' estimator computed them for one cluster: that
// cluster's estimates are replaced as a whole (jobs no longer pending or gone elsewhere lose
// theirs), each job keeping the first start it was given while it stays estimated. No events and
// no change of the job rows: this is derived data the API and the metrics read.
import { prismaOf } from "../client.js";
import type { Store } from "../store.js";

export interface JobEstimateRow {
  jobId: string;
  /** The cluster the estimate is for; null = the job waits for admission. */
  cluster: string | null;
  /** null = not within the estimator's horizon or budget, or waiting on run times unknown. */
  start: Date | null;
}

/** Estimates older than this are replaced by any cluster's offer (their cluster stopped offering). */
const OFFER_STALE_MS = 10 * 60_000;

/**
 * Replaces every estimate of `cluster` (null: of jobs without a cluster) with `rows`, and offers
 * the cluster's estimates of jobs waiting for admission (`offers`): an offer is kept when the job
 * has no earlier start from another cluster. Estimates of jobs no longer waiting for admission
 * that no cluster gave go.
 */
export async function replaceJobEstimates(
  store: Store,
  cluster: string | null,
  rows: readonly JobEstimateRow[],
  at = new Date(),
  offers: readonly JobEstimateRow[] = [],
): Promise<void> {
  const data = JSON.stringify(
    rows.map((r) => ({ job: r.jobId, cluster: r.cluster, start: r.start?.toISOString() ?? null })),
  );
  const offered = JSON.stringify(
    offers.map((r) => ({
      job: r.jobId,
      cluster: r.start ? r.cluster : null,
      start: r.start?.toISOString() ?? null,
    })),
  );
  const staleBefore = new Date(at.getTime() - OFFER_STALE_MS);
  await prismaOf(store).$transaction(async (tx) => {
    // Jobs estimated or offered again keep their row, and with it their first estimate.
    const kept = [...rows, ...offers].map((r) => r.jobId);
    await tx.$executeRaw`
      DELETE FROM job_estimate
      WHERE cluster_name IS NOT DISTINCT FROM ${cluster} AND NOT (job_id = ANY(${kept}::uuid[]))`;
    if (rows.length)
      // Jobs deleted meanwhile are skipped by the join; a job estimated for another cluster before
      // (reassigned) takes this cluster's estimate.
      await tx.$executeRaw`
        INSERT INTO job_estimate AS e (job_id, cluster_name, estimated_start, first_estimated_start, computed_at)
        SELECT v.job, v.cluster, v.start, v.start, ${at}
        FROM jsonb_to_recordset(${data}::jsonb) AS v(job uuid, cluster text, start timestamp(3))
        JOIN job j ON j.id = v.job
        ON CONFLICT (job_id) DO UPDATE SET cluster_name = excluded.cluster_name,
          estimated_start = excluded.estimated_start, computed_at = excluded.computed_at,
          first_estimated_start = COALESCE(e.first_estimated_start, excluded.estimated_start)`;
    if (offers.length)
      await tx.$executeRaw`
        INSERT INTO job_estimate AS e (job_id, cluster_name, estimated_start, first_estimated_start, computed_at)
        SELECT v.job, v.cluster, v.start, v.start, ${at}
        FROM jsonb_to_recordset(${offered}::jsonb) AS v(job uuid, cluster text, start timestamp(3))
        JOIN job j ON j.id = v.job AND j.state = 'PENDING' AND j.cluster_name IS NULL
        ON CONFLICT (job_id) DO UPDATE SET cluster_name = excluded.cluster_name,
          estimated_start = excluded.estimated_start, computed_at = excluded.computed_at,
          first_estimated_start = COALESCE(e.first_estimated_start, excluded.estimated_start)
        WHERE e.cluster_name IS NOT DISTINCT FROM ${cluster}
          OR (e.estimated_start IS NULL AND excluded.estimated_start IS NOT NULL)
          OR excluded.estimated_start < e.estimated_start
          OR e.computed_at < ${staleBefore}`;
    await tx.$executeRaw`
      DELETE FROM job_estimate e WHERE e.cluster_name IS NULL AND NOT EXISTS (
        SELECT 1 FROM job j WHERE j.id = e.job_id AND j.state = 'PENDING' AND j.cluster_name IS NULL)`;
  });
}
