-- AlterTable
ALTER TABLE "job" ADD COLUMN     "created_in_cluster" BOOLEAN NOT NULL DEFAULT false;

-- CreateIndex
CREATE INDEX "job_requested_cluster_namespace_name_idx" ON "job"("requested_cluster", "namespace", "name");
