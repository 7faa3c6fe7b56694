-- CreateEnum
CREATE TYPE "ClusterState" AS ENUM ('REGISTERED', 'READY');

-- CreateEnum
CREATE TYPE "JobState" AS ENUM ('PENDING', 'ADMITTED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED');

-- CreateEnum
CREATE TYPE "PodState" AS ENUM ('PENDING', 'PIPELINED', 'BINDING', 'RUNNING', 'RELEASING', 'SUCCEEDED', 'FAILED');

-- CreateEnum
CREATE TYPE "QuotaResource" AS ENUM ('GPU', 'CPU', 'MEMORY');

-- CreateEnum
CREATE TYPE "Role" AS ENUM ('ADMIN', 'MEMBER', 'VIEWER', 'AGENT');

-- CreateEnum
CREATE TYPE "BindRequestKind" AS ENUM ('BIND', 'EVICT');

-- CreateEnum
CREATE TYPE "BindRequestState" AS ENUM ('PENDING', 'DISPATCHED', 'SUCCEEDED', 'FAILED');

-- CreateTable
CREATE TABLE "cluster" (
    "name" TEXT NOT NULL,
    "labels" JSONB NOT NULL DEFAULT '{}',
    "state" "ClusterState" NOT NULL DEFAULT 'REGISTERED',
    "cordoned" BOOLEAN NOT NULL DEFAULT false,
    "heartbeat_at" TIMESTAMP(3),
    "generation" BIGINT NOT NULL DEFAULT 0,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "cluster_pkey" PRIMARY KEY ("name")
);

-- CreateTable
CREATE TABLE "node" (
    "cluster_name" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "labels" JSONB NOT NULL DEFAULT '{}',
    "taints" JSONB NOT NULL DEFAULT '[]',
    "unschedulable" BOOLEAN NOT NULL DEFAULT false,
    "ready" BOOLEAN NOT NULL DEFAULT true,
    "cpu_millis" INTEGER NOT NULL,
    "memory" BIGINT NOT NULL,
    "gpus" INTEGER NOT NULL,
    "gpu_memory" INTEGER NOT NULL DEFAULT 0,
    "max_pods" INTEGER NOT NULL DEFAULT 110,
    "gpu_model" TEXT,
    "updated_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "node_pkey" PRIMARY KEY ("cluster_name","name")
);

-- CreateTable
CREATE TABLE "queue" (
    "name" TEXT NOT NULL,
    "parent_name" TEXT,
    "priority" INTEGER NOT NULL DEFAULT 100,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "queue_pkey" PRIMARY KEY ("name")
);

-- CreateTable
CREATE TABLE "queue_quota" (
    "queue_name" TEXT NOT NULL,
    "scope" TEXT NOT NULL,
    "resource" "QuotaResource" NOT NULL,
    "deserved" DOUBLE PRECISION,
    "limit" DOUBLE PRECISION,
    "over_quota_weight" DOUBLE PRECISION,
    "updated_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "queue_quota_pkey" PRIMARY KEY ("queue_name","scope","resource")
);

-- CreateTable
CREATE TABLE "job" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "namespace" TEXT NOT NULL DEFAULT 'default',
    "queue_name" TEXT NOT NULL,
    "requested_cluster" TEXT,
    "cluster_name" TEXT,
    "cluster_selector" JSONB NOT NULL DEFAULT '[]',
    "priority" INTEGER NOT NULL,
    "preemptible" BOOLEAN NOT NULL,
    "min_member" INTEGER NOT NULL,
    "sub_groups" JSONB NOT NULL DEFAULT '[]',
    "topology" JSONB,
    "state" "JobState" NOT NULL DEFAULT 'PENDING',
    "pending_reason" JSONB,
    "idempotency_key" TEXT,
    "spec_hash" TEXT NOT NULL,
    "submitted_by" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "admitted_at" TIMESTAMP(3),
    "started_at" TIMESTAMP(3),
    "finished_at" TIMESTAMP(3),
    "last_start_at" TIMESTAMP(3),
    "stale_since" TIMESTAMP(3),

    CONSTRAINT "job_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "job_task" (
    "job_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "replicas" INTEGER NOT NULL,
    "cpu_millis" INTEGER NOT NULL,
    "memory" BIGINT NOT NULL,
    "gpus" INTEGER NOT NULL,
    "gpu_fraction" DOUBLE PRECISION NOT NULL,
    "gpu_memory" INTEGER NOT NULL,
    "sub_group" TEXT,
    "node_selector" JSONB NOT NULL DEFAULT '[]',
    "gpu_model" TEXT,
    "template" JSONB,
    "duration_seconds" INTEGER,
    "exit_failure" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "job_task_pkey" PRIMARY KEY ("job_id","name")
);

-- CreateTable
CREATE TABLE "pod" (
    "id" UUID NOT NULL,
    "job_id" UUID NOT NULL,
    "task_name" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "state" "PodState" NOT NULL DEFAULT 'PENDING',
    "node_name" TEXT,
    "gpu_groups" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "message" TEXT,
    "cpu_millis" INTEGER NOT NULL,
    "memory" BIGINT NOT NULL,
    "gpus" INTEGER NOT NULL,
    "gpu_fraction" DOUBLE PRECISION NOT NULL,
    "gpu_memory" INTEGER NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMP(3),
    "finished_at" TIMESTAMP(3),

    CONSTRAINT "pod_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "bind_request" (
    "id" UUID NOT NULL,
    "kind" "BindRequestKind" NOT NULL,
    "cluster_name" TEXT NOT NULL,
    "job_id" UUID NOT NULL,
    "pod_id" UUID NOT NULL,
    "node_name" TEXT NOT NULL,
    "gpu_groups" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "reason" TEXT NOT NULL DEFAULT '',
    "state" "BindRequestState" NOT NULL DEFAULT 'PENDING',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_error" TEXT,
    "generation" BIGINT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "dispatched_at" TIMESTAMP(3),
    "completed_at" TIMESTAMP(3),

    CONSTRAINT "bind_request_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "queue_usage" (
    "queue_name" TEXT NOT NULL,
    "cluster_name" TEXT NOT NULL,
    "bucket_start" TIMESTAMP(3) NOT NULL,
    "gpu_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "cpu_milli_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "memory_byte_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0,

    CONSTRAINT "queue_usage_pkey" PRIMARY KEY ("queue_name","cluster_name","bucket_start")
);

-- CreateTable
CREATE TABLE "api_token" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "role" "Role" NOT NULL,
    "secret_hash" TEXT NOT NULL,
    "queues" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "cluster_name" TEXT,
    "created_by" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revoked_at" TIMESTAMP(3),

    CONSTRAINT "api_token_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "event" (
    "id" BIGSERIAL NOT NULL,
    "at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "kind" TEXT NOT NULL,
    "message" TEXT NOT NULL,
    "job_id" UUID,
    "queue_name" TEXT,
    "cluster_name" TEXT,
    "actor" TEXT,

    CONSTRAINT "event_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "queue_parent_name_idx" ON "queue"("parent_name");

-- CreateIndex
CREATE INDEX "job_cluster_name_state_idx" ON "job"("cluster_name", "state");

-- CreateIndex
CREATE INDEX "job_state_created_at_idx" ON "job"("state", "created_at");

-- CreateIndex
CREATE INDEX "job_created_at_id_idx" ON "job"("created_at", "id");

-- CreateIndex
CREATE UNIQUE INDEX "job_queue_name_idempotency_key_key" ON "job"("queue_name", "idempotency_key");

-- CreateIndex
CREATE INDEX "pod_state_node_name_idx" ON "pod"("state", "node_name");

-- CreateIndex
CREATE UNIQUE INDEX "pod_job_id_name_key" ON "pod"("job_id", "name");

-- CreateIndex
CREATE INDEX "bind_request_cluster_name_state_created_at_idx" ON "bind_request"("cluster_name", "state", "created_at");

-- CreateIndex
CREATE INDEX "bind_request_job_id_idx" ON "bind_request"("job_id");

-- CreateIndex
CREATE INDEX "bind_request_pod_id_idx" ON "bind_request"("pod_id");

-- CreateIndex
CREATE INDEX "queue_usage_cluster_name_bucket_start_idx" ON "queue_usage"("cluster_name", "bucket_start");

-- CreateIndex
CREATE UNIQUE INDEX "api_token_secret_hash_key" ON "api_token"("secret_hash");

-- CreateIndex
CREATE INDEX "event_job_id_id_idx" ON "event"("job_id", "id");

-- CreateIndex
CREATE INDEX "event_queue_name_id_idx" ON "event"("queue_name", "id");

-- AddForeignKey
ALTER TABLE "node" ADD CONSTRAINT "node_cluster_name_fkey" FOREIGN KEY ("cluster_name") REFERENCES "cluster"("name") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "queue" ADD CONSTRAINT "queue_parent_name_fkey" FOREIGN KEY ("parent_name") REFERENCES "queue"("name") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "queue_quota" ADD CONSTRAINT "queue_quota_queue_name_fkey" FOREIGN KEY ("queue_name") REFERENCES "queue"("name") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "job" ADD CONSTRAINT "job_queue_name_fkey" FOREIGN KEY ("queue_name") REFERENCES "queue"("name") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "job" ADD CONSTRAINT "job_cluster_name_fkey" FOREIGN KEY ("cluster_name") REFERENCES "cluster"("name") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "job_task" ADD CONSTRAINT "job_task_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "job"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "pod" ADD CONSTRAINT "pod_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "job"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "pod" ADD CONSTRAINT "pod_job_id_task_name_fkey" FOREIGN KEY ("job_id", "task_name") REFERENCES "job_task"("job_id", "name") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "bind_request" ADD CONSTRAINT "bind_request_cluster_name_fkey" FOREIGN KEY ("cluster_name") REFERENCES "cluster"("name") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "bind_request" ADD CONSTRAINT "bind_request_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "job"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "bind_request" ADD CONSTRAINT "bind_request_pod_id_fkey" FOREIGN KEY ("pod_id") REFERENCES "pod"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "queue_usage" ADD CONSTRAINT "queue_usage_queue_name_fkey" FOREIGN KEY ("queue_name") REFERENCES "queue"("name") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "queue_usage" ADD CONSTRAINT "queue_usage_cluster_name_fkey" FOREIGN KEY ("cluster_name") REFERENCES "cluster"("name") ON DELETE CASCADE ON UPDATE CASCADE;
