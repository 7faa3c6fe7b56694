-- AlterTable
ALTER TABLE "pod" ADD COLUMN     "cluster_uid" TEXT;
