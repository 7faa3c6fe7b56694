-- Estimated start of pending jobs (the workers' estimator), apart from the job row so that writing
-- estimates never moves the job's change_xid (the scheduler's caches re-read changed jobs).
CREATE TABLE "job_estimate" (
    "job_id" UUID NOT NULL,
    "cluster_name" TEXT,
    "estimated_start" TIMESTAMP(3),
    "computed_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "job_estimate_pkey" PRIMARY KEY ("job_id")
);

-- AddForeignKey
ALTER TABLE "job_estimate" ADD CONSTRAINT "job_estimate_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "job"("id") ON DELETE CASCADE ON UPDATE CASCADE;
