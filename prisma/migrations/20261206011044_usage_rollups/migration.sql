-- CreateTable
CREATE TABLE "usage_sample" (
    "cluster_name" TEXT NOT NULL,
    "bucket_start" TIMESTAMP(3) NOT NULL,
    "job_id" UUID NOT NULL,
    "gpu_model" TEXT NOT NULL,
    "queue_name" TEXT NOT NULL,
    "labels" JSONB NOT NULL DEFAULT '{}',
    "alloc_gpu_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "alloc_cpu_milli_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "alloc_memory_byte_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "used_gpu_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "used_cpu_milli_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "used_memory_byte_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0,

    CONSTRAINT "usage_sample_pkey" PRIMARY KEY ("cluster_name","bucket_start","job_id","gpu_model")
);

-- CreateTable
CREATE TABLE "usage_mark" (
    "cluster_name" TEXT NOT NULL,
    "sampled_to" TIMESTAMP(3),
    "rolled_to" TIMESTAMP(3),

    CONSTRAINT "usage_mark_pkey" PRIMARY KEY ("cluster_name")
);

-- CreateTable
CREATE TABLE "usage_label_set" (
    "id" SERIAL NOT NULL,
    "labels" JSONB NOT NULL,

    CONSTRAINT "usage_label_set_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "usage_hour" (
    "hour" TIMESTAMP(3) NOT NULL,
    "cluster_name" TEXT NOT NULL,
    "queue_name" TEXT NOT NULL,
    "gpu_model" TEXT NOT NULL,
    "label_set_id" INTEGER NOT NULL,
    "alloc_gpu_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "alloc_cpu_milli_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "alloc_memory_byte_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "used_gpu_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "used_cpu_milli_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "used_memory_byte_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0,

    CONSTRAINT "usage_hour_pkey" PRIMARY KEY ("hour","cluster_name","queue_name","gpu_model","label_set_id")
);

-- CreateTable
CREATE TABLE "usage_day" (
    "day" TIMESTAMP(3) NOT NULL,
    "cluster_name" TEXT NOT NULL,
    "queue_name" TEXT NOT NULL,
    "gpu_model" TEXT NOT NULL,
    "label_set_id" INTEGER NOT NULL,
    "alloc_gpu_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "alloc_cpu_milli_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "alloc_memory_byte_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "used_gpu_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "used_cpu_milli_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "used_memory_byte_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0,

    CONSTRAINT "usage_day_pkey" PRIMARY KEY ("day","cluster_name","queue_name","gpu_model","label_set_id")
);

-- CreateTable
CREATE TABLE "job_usage" (
    "job_id" UUID NOT NULL,
    "cluster_name" TEXT NOT NULL,
    "alloc_gpu_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "alloc_cpu_milli_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "alloc_memory_byte_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "used_gpu_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "used_cpu_milli_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "used_memory_byte_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0,

    CONSTRAINT "job_usage_pkey" PRIMARY KEY ("job_id","cluster_name")
);

-- CreateTable
CREATE TABLE "usage_price" (
    "cluster_name" TEXT NOT NULL,
    "gpu_model" TEXT NOT NULL,
    "resource" "QuotaResource" NOT NULL,
    "price" DOUBLE PRECISION NOT NULL,
    "updated_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "usage_price_pkey" PRIMARY KEY ("cluster_name","gpu_model","resource")
);

-- CreateIndex
CREATE INDEX "usage_sample_job_id_idx" ON "usage_sample"("job_id");

-- CreateIndex
CREATE UNIQUE INDEX "usage_label_set_labels_key" ON "usage_label_set"("labels");

-- CreateIndex
CREATE INDEX "usage_hour_cluster_name_hour_idx" ON "usage_hour"("cluster_name", "hour");

-- CreateIndex
CREATE INDEX "usage_day_cluster_name_day_idx" ON "usage_day"("cluster_name", "day");

-- AddForeignKey
ALTER TABLE "job_usage" ADD CONSTRAINT "job_usage_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "job"("id") ON DELETE CASCADE ON UPDATE CASCADE;
