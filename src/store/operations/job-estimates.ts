// Estimated starts of pending jobs, as the workers' estimator computed them for one cluster: that
// cluster's estimates are replaced as a whole (jobs no longer pending or gone elsewhere lose
// theirs). No events and no change of the job rows: this is derived data the API reads.
import type { Store } from "../store.js";

export interface JobEstimateRow {
  jobId: string;
  /** The cluster the estimate is for; null = the job waits for admission. */
  cluster: string | null;
  /** null = not within the estimator's horizon or budget, or waiting on run times unknown. */
  start: Date | null;
}

/** Replaces every estimate of `cluster` (null: of jobs without a cluster) with `rows`. */
export async function replaceJobEstimates(
  store: Store,
  cluster: string | null,
  rows: readonly JobEstimateRow[],
  at = new Date(),
): Promise<void> {
  const data = JSON.stringify(
    rows.map((r) => ({ job: r.jobId, cluster: r.cluster, start: r.start?.toISOString() ?? null })),
  );
  await store.prisma.$transaction(async (tx) => {
    if (cluster === null) await tx.$executeRaw`DELETE FROM job_estimate WHERE cluster_name IS NULL`;
    else await tx.$executeRaw`DELETE FROM job_estimate WHERE cluster_name = ${cluster}`;
    if (!rows.length) return;
    // Jobs deleted meanwhile are skipped by the join; a job estimated for another cluster before
    // (reassigned) takes this cluster's estimate.
    await tx.$executeRaw`
      INSERT INTO job_estimate (job_id, cluster_name, estimated_start, computed_at)
      SELECT v.job, v.cluster, v.start, ${at}
      FROM jsonb_to_recordset(${data}::jsonb) AS v(job uuid, cluster text, start timestamp(3))
      JOIN job j ON j.id = v.job
      ON CONFLICT (job_id) DO UPDATE SET cluster_name = excluded.cluster_name,
        estimated_start = excluded.estimated_start, computed_at = excluded.computed_at`;
  });
}
