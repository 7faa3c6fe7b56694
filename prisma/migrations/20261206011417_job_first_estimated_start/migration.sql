-- AlterTable
ALTER TABLE "job_estimate" ADD COLUMN     "first_estimated_start" TIMESTAMP(3),
ADD COLUMN     "overdue_reported_at" TIMESTAMP(3);
