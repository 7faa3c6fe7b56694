-- Training jobs: gang restarts (the policy, how many so far, the hold on a restarted gang's pods
-- until the previous attempt stopped and the backoff passed), the rendezvous port, the exit code
-- a pod's run ended with, the attempt each BindRequest belongs to, and each task's place in the
-- submitted spec (ranks follow it). Nullable or constant-default columns: no table rewrite.
-- AlterTable
ALTER TABLE "bind_request" ADD COLUMN     "restarts" INTEGER NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "job" ADD COLUMN     "rendezvous_port" INTEGER,
ADD COLUMN     "restart_after" TIMESTAMP(3),
ADD COLUMN     "restart_policy" JSONB,
ADD COLUMN     "restarts" INTEGER NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "job_task" ADD COLUMN     "exit_failure_attempts" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "position" INTEGER NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "pod" ADD COLUMN     "exit_code" INTEGER;

-- Tasks submitted before: their declaration order is not known; name order is what was shown.
UPDATE "job_task" t SET "position" = o.n
FROM (SELECT job_id, name, (row_number() OVER (PARTITION BY job_id ORDER BY name COLLATE "C")) - 1 AS n FROM "job_task") o
WHERE t.job_id = o.job_id AND t.name = o.name AND o.n > 0;

-- The restart check finds held gangs without reading every job.
CREATE INDEX "job_restart_after_idx" ON "job"("restart_after") WHERE "restart_after" IS NOT NULL;
