-- CreateEnum
CREATE TYPE "PodSecurityLevel" AS ENUM ('PRIVILEGED', 'BASELINE', 'RESTRICTED');

-- AlterTable
ALTER TABLE "queue" ADD COLUMN     "namespaces" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN     "pod_security" "PodSecurityLevel";
