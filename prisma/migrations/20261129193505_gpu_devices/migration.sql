-- AlterTable
ALTER TABLE "bind_request" ADD COLUMN     "gpu_devices" INTEGER[] DEFAULT ARRAY[]::INTEGER[];

-- AlterTable
ALTER TABLE "node" ADD COLUMN     "gpu_devices" JSONB NOT NULL DEFAULT '[]';

-- AlterTable
ALTER TABLE "pod" ADD COLUMN     "gpu_devices" INTEGER[] DEFAULT ARRAY[]::INTEGER[];
