-- Jobs for CI pipelines: labels ({key: value}, found by containment through a GIN index),
-- a run-time limit (maxRuntimeSeconds; the workers stop a job RUNNING past it) and a declared
-- expected run time (start-time estimates). Nullable or defaulted columns: no table rewrite.
-- AlterTable
ALTER TABLE "job" ADD COLUMN     "expected_runtime_seconds" INTEGER,
ADD COLUMN     "labels" JSONB NOT NULL DEFAULT '{}',
ADD COLUMN     "max_runtime_seconds" INTEGER;

-- CreateIndex
CREATE INDEX "job_labels_idx" ON "job" USING GIN ("labels" jsonb_path_ops);
