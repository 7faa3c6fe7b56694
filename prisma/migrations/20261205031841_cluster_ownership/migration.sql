-- CreateTable
CREATE TABLE "worker" (
    "id" TEXT NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "worker_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "cluster_lease" (
    "cluster_name" TEXT NOT NULL,
    "owner" TEXT,
    "epoch" BIGINT NOT NULL DEFAULT 0,
    "acquired_at" TIMESTAMPTZ(3),
    "expires_at" TIMESTAMPTZ(3),

    CONSTRAINT "cluster_lease_pkey" PRIMARY KEY ("cluster_name")
);

-- AddForeignKey
ALTER TABLE "cluster_lease" ADD CONSTRAINT "cluster_lease_cluster_name_fkey" FOREIGN KEY ("cluster_name") REFERENCES "cluster"("name") ON DELETE CASCADE ON UPDATE CASCADE;
