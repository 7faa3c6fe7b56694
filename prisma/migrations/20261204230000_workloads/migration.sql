-- Kubernetes workloads: a job may be a manifest (Job, JobSet, PyTorchJob, MPIJob) its cluster's
-- agent creates and whose controller makes the pods; a queue may set the request a workload's
-- container that asks for none gets; a cancelled workload's object is deleted by a DELETE request.
-- AlterEnum
ALTER TYPE "BindRequestKind" ADD VALUE 'DELETE';

-- AlterTable
ALTER TABLE "job" ADD COLUMN     "workload" JSONB;

-- AlterTable
ALTER TABLE "queue" ADD COLUMN     "default_request" JSONB;
