-- CreateTable
CREATE TABLE "queue_share_sample" (
    "queue_name" TEXT NOT NULL,
    "cluster_name" TEXT NOT NULL,
    "at" TIMESTAMP(3) NOT NULL,
    "span_seconds" INTEGER NOT NULL,
    "deserved_gpu" DOUBLE PRECISION NOT NULL,
    "deserved_cpu" DOUBLE PRECISION NOT NULL,
    "deserved_mem" DOUBLE PRECISION NOT NULL,
    "fair_share_gpu" DOUBLE PRECISION NOT NULL,
    "fair_share_cpu" DOUBLE PRECISION NOT NULL,
    "fair_share_mem" DOUBLE PRECISION NOT NULL,
    "allocated_gpu" DOUBLE PRECISION NOT NULL,
    "allocated_cpu" DOUBLE PRECISION NOT NULL,
    "allocated_mem" DOUBLE PRECISION NOT NULL,

    CONSTRAINT "queue_share_sample_pkey" PRIMARY KEY ("queue_name","cluster_name","at")
);

-- CreateIndex
CREATE INDEX "queue_share_sample_cluster_name_span_seconds_at_idx" ON "queue_share_sample"("cluster_name", "span_seconds", "at");

-- AddForeignKey
ALTER TABLE "queue_share_sample" ADD CONSTRAINT "queue_share_sample_queue_name_fkey" FOREIGN KEY ("queue_name") REFERENCES "queue"("name") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "queue_share_sample" ADD CONSTRAINT "queue_share_sample_cluster_name_fkey" FOREIGN KEY ("cluster_name") REFERENCES "cluster"("name") ON DELETE CASCADE ON UPDATE CASCADE;
