-- Change tracking for the workers' cluster caches (docs/worker-cache.md). Every row a cluster's
-- snapshot is built from carries the id of the transaction that last wrote it; deletions (and a
-- job leaving its cluster) leave a tombstone. A reader that took pg_current_snapshot() reads the
-- rows with change_xid >= its cursor, and its next cursor is that snapshot's xmin: a transaction
-- it could not see has an id >= xmin, so nothing committed late is missed.

-- The constant default keeps ADD COLUMN a catalog change (no table rewrite); rows written from
-- now on get their transaction's id (default for inserts, trigger for updates).
ALTER TABLE "cluster" ADD COLUMN "change_xid" xid8 NOT NULL DEFAULT '0';
ALTER TABLE "node" ADD COLUMN "change_xid" xid8 NOT NULL DEFAULT '0';
ALTER TABLE "queue" ADD COLUMN "change_xid" xid8 NOT NULL DEFAULT '0';
ALTER TABLE "queue_quota" ADD COLUMN "change_xid" xid8 NOT NULL DEFAULT '0';
ALTER TABLE "job" ADD COLUMN "change_xid" xid8 NOT NULL DEFAULT '0';
ALTER TABLE "job_task" ADD COLUMN "change_xid" xid8 NOT NULL DEFAULT '0';
ALTER TABLE "pod" ADD COLUMN "change_xid" xid8 NOT NULL DEFAULT '0';
ALTER TABLE "cluster" ALTER COLUMN "change_xid" SET DEFAULT pg_current_xact_id();
ALTER TABLE "node" ALTER COLUMN "change_xid" SET DEFAULT pg_current_xact_id();
ALTER TABLE "queue" ALTER COLUMN "change_xid" SET DEFAULT pg_current_xact_id();
ALTER TABLE "queue_quota" ALTER COLUMN "change_xid" SET DEFAULT pg_current_xact_id();
ALTER TABLE "job" ALTER COLUMN "change_xid" SET DEFAULT pg_current_xact_id();
ALTER TABLE "job_task" ALTER COLUMN "change_xid" SET DEFAULT pg_current_xact_id();
ALTER TABLE "pod" ALTER COLUMN "change_xid" SET DEFAULT pg_current_xact_id();

CREATE INDEX "node_cluster_name_change_xid_idx" ON "node"("cluster_name", "change_xid");
CREATE INDEX "job_cluster_name_change_xid_idx" ON "job"("cluster_name", "change_xid");
CREATE INDEX "job_task_change_xid_idx" ON "job_task"("change_xid");
CREATE INDEX "pod_change_xid_idx" ON "pod"("change_xid");

CREATE TABLE "change_tombstone" (
    "id" BIGSERIAL NOT NULL,
    "table_name" TEXT NOT NULL,
    "cluster_name" TEXT,
    "job_id" UUID,
    "key" TEXT NOT NULL,
    "change_xid" xid8 NOT NULL DEFAULT pg_current_xact_id(),
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "change_tombstone_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "change_tombstone_change_xid_idx" ON "change_tombstone"("change_xid");
CREATE INDEX "change_tombstone_at_idx" ON "change_tombstone"("at");

-- The newest transaction id whose tombstones were pruned: a cursor at or below it missed some.
CREATE TABLE "change_horizon" (
    "id" INTEGER NOT NULL DEFAULT 1,
    "pruned_xid" xid8 NOT NULL DEFAULT '0',

    CONSTRAINT "change_horizon_pkey" PRIMARY KEY ("id")
);
INSERT INTO "change_horizon" ("id") VALUES (1);

CREATE FUNCTION "stamp_change_xid"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.change_xid := pg_current_xact_id();
  RETURN NEW;
END $$;

CREATE TRIGGER "cluster_change_xid" BEFORE INSERT OR UPDATE ON "cluster" FOR EACH ROW EXECUTE FUNCTION "stamp_change_xid"();
CREATE TRIGGER "node_change_xid" BEFORE INSERT OR UPDATE ON "node" FOR EACH ROW EXECUTE FUNCTION "stamp_change_xid"();
CREATE TRIGGER "queue_change_xid" BEFORE INSERT OR UPDATE ON "queue" FOR EACH ROW EXECUTE FUNCTION "stamp_change_xid"();
CREATE TRIGGER "queue_quota_change_xid" BEFORE INSERT OR UPDATE ON "queue_quota" FOR EACH ROW EXECUTE FUNCTION "stamp_change_xid"();
CREATE TRIGGER "job_change_xid" BEFORE INSERT OR UPDATE ON "job" FOR EACH ROW EXECUTE FUNCTION "stamp_change_xid"();
CREATE TRIGGER "job_task_change_xid" BEFORE INSERT OR UPDATE ON "job_task" FOR EACH ROW EXECUTE FUNCTION "stamp_change_xid"();
CREATE TRIGGER "pod_change_xid" BEFORE INSERT OR UPDATE ON "pod" FOR EACH ROW EXECUTE FUNCTION "stamp_change_xid"();

-- Tombstones. A pod's or task's cluster is its job's, which a cascade may already have deleted:
-- those carry the job id and no cluster (readers of every cluster look at them).
CREATE FUNCTION "tombstone_row"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'node' THEN
    INSERT INTO change_tombstone (table_name, cluster_name, key) VALUES ('node', OLD.cluster_name, OLD.name);
  ELSIF TG_TABLE_NAME = 'job' THEN
    IF TG_OP = 'UPDATE' THEN
      IF OLD.cluster_name IS NOT DISTINCT FROM NEW.cluster_name THEN
        RETURN NULL;
      END IF;
    END IF;
    IF OLD.cluster_name IS NOT NULL THEN
      INSERT INTO change_tombstone (table_name, cluster_name, job_id, key)
      VALUES ('job', OLD.cluster_name, OLD.id, OLD.id::text);
    END IF;
  ELSIF TG_TABLE_NAME = 'pod' THEN
    INSERT INTO change_tombstone (table_name, job_id, key) VALUES ('pod', OLD.job_id, OLD.id::text);
  ELSIF TG_TABLE_NAME = 'job_task' THEN
    INSERT INTO change_tombstone (table_name, job_id, key) VALUES ('job_task', OLD.job_id, OLD.name);
  ELSIF TG_TABLE_NAME = 'queue' THEN
    INSERT INTO change_tombstone (table_name, key) VALUES ('queue', OLD.name);
  ELSIF TG_TABLE_NAME = 'queue_quota' THEN
    INSERT INTO change_tombstone (table_name, key) VALUES ('queue_quota', OLD.queue_name);
  ELSIF TG_TABLE_NAME = 'cluster' THEN
    INSERT INTO change_tombstone (table_name, cluster_name, key) VALUES ('cluster', OLD.name, OLD.name);
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER "node_tombstone" AFTER DELETE ON "node" FOR EACH ROW EXECUTE FUNCTION "tombstone_row"();
CREATE TRIGGER "job_tombstone" AFTER DELETE OR UPDATE OF "cluster_name" ON "job" FOR EACH ROW EXECUTE FUNCTION "tombstone_row"();
CREATE TRIGGER "pod_tombstone" AFTER DELETE ON "pod" FOR EACH ROW EXECUTE FUNCTION "tombstone_row"();
CREATE TRIGGER "job_task_tombstone" AFTER DELETE ON "job_task" FOR EACH ROW EXECUTE FUNCTION "tombstone_row"();
CREATE TRIGGER "queue_tombstone" AFTER DELETE ON "queue" FOR EACH ROW EXECUTE FUNCTION "tombstone_row"();
CREATE TRIGGER "queue_quota_tombstone" AFTER DELETE ON "queue_quota" FOR EACH ROW EXECUTE FUNCTION "tombstone_row"();
CREATE TRIGGER "cluster_tombstone" AFTER DELETE ON "cluster" FOR EACH ROW EXECUTE FUNCTION "tombstone_row"();
