-- Change tracking: an inserted row takes its change_xid from the column's default
-- (pg_current_xact_id(), the inserting transaction's id: the value the trigger gave it), and the
-- per-row trigger stamps updates only. A trigger call per inserted row cost about a quarter of
-- the pod inserts of a large submitJobs. INSERT … ON CONFLICT DO UPDATE still goes through the
-- update trigger. No code writes change_xid itself (Prisma cannot: the column is Unsupported).
DROP TRIGGER "cluster_change_xid" ON "cluster";
DROP TRIGGER "node_change_xid" ON "node";
DROP TRIGGER "queue_change_xid" ON "queue";
DROP TRIGGER "queue_quota_change_xid" ON "queue_quota";
DROP TRIGGER "job_change_xid" ON "job";
DROP TRIGGER "job_task_change_xid" ON "job_task";
DROP TRIGGER "pod_change_xid" ON "pod";

CREATE TRIGGER "cluster_change_xid" BEFORE UPDATE ON "cluster" FOR EACH ROW EXECUTE FUNCTION "stamp_change_xid"();
CREATE TRIGGER "node_change_xid" BEFORE UPDATE ON "node" FOR EACH ROW EXECUTE FUNCTION "stamp_change_xid"();
CREATE TRIGGER "queue_change_xid" BEFORE UPDATE ON "queue" FOR EACH ROW EXECUTE FUNCTION "stamp_change_xid"();
CREATE TRIGGER "queue_quota_change_xid" BEFORE UPDATE ON "queue_quota" FOR EACH ROW EXECUTE FUNCTION "stamp_change_xid"();
CREATE TRIGGER "job_change_xid" BEFORE UPDATE ON "job" FOR EACH ROW EXECUTE FUNCTION "stamp_change_xid"();
CREATE TRIGGER "job_task_change_xid" BEFORE UPDATE ON "job_task" FOR EACH ROW EXECUTE FUNCTION "stamp_change_xid"();
CREATE TRIGGER "pod_change_xid" BEFORE UPDATE ON "pod" FOR EACH ROW EXECUTE FUNCTION "stamp_change_xid"();
