-- AlterTable
ALTER TABLE "api_token" ADD COLUMN     "subject" TEXT;

-- AlterTable
ALTER TABLE "cluster" ADD COLUMN     "pod_policy" JSONB;

-- AlterTable
ALTER TABLE "job_task" ADD COLUMN     "extended_resources" JSONB NOT NULL DEFAULT '{}';

-- AlterTable
ALTER TABLE "queue" ADD COLUMN     "pod_policy" JSONB;

-- CreateTable
CREATE TABLE "role_binding" (
    "id" UUID NOT NULL,
    "subject" TEXT,
    "group_name" TEXT,
    "role" "Role" NOT NULL,
    "queues" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "cluster_name" TEXT,
    "created_by" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revoked_at" TIMESTAMP(3),

    CONSTRAINT "role_binding_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "role_binding_subject_idx" ON "role_binding"("subject");

-- CreateIndex
CREATE INDEX "role_binding_group_name_idx" ON "role_binding"("group_name");

-- Queues made before this migration inherited the namespace "default" at the top of the tree.
-- New top-level queues get a namespace of their own (fleetq-<queue>); the existing ones keep what
-- they had, written out.
UPDATE "queue" SET "namespaces" = ARRAY['default']::TEXT[]
WHERE "parent_name" IS NULL AND cardinality("namespaces") = 0;
