-- What pods hold on each node (requests of pods BINDING, RUNNING or RELEASING), kept by statement
-- triggers on pod so that per-cluster and per-node views read a few rows instead of summing every
-- pod of the cluster. A pod's cluster is its job's; a job only changes cluster while none of its
-- pods holds a node, so the pod's own rows are enough to keep the sums.
CREATE TABLE "node_allocation" (
    "cluster_name" TEXT NOT NULL,
    "node_name" TEXT NOT NULL,
    "cpu_millis" BIGINT NOT NULL DEFAULT 0,
    "memory" DECIMAL(65,30) NOT NULL DEFAULT 0,
    "gpu" DECIMAL(65,30) NOT NULL DEFAULT 0,
    "gpu_memory" BIGINT NOT NULL DEFAULT 0,
    "pods" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "node_allocation_pkey" PRIMARY KEY ("cluster_name", "node_name"),
    CONSTRAINT "node_allocation_cluster_name_fkey" FOREIGN KEY ("cluster_name") REFERENCES "cluster"("name") ON DELETE CASCADE ON UPDATE CASCADE
);

INSERT INTO "node_allocation" ("cluster_name", "node_name", "cpu_millis", "memory", "gpu", "gpu_memory", "pods")
SELECT j.cluster_name, p.node_name, sum(p.cpu_millis), sum(p.memory), sum(p.gpus + p.gpu_fraction::numeric),
       sum(p.gpu_memory), count(*)
FROM pod p JOIN job j ON j.id = p.job_id
WHERE p.state IN ('BINDING', 'RUNNING', 'RELEASING') AND p.node_name IS NOT NULL AND j.cluster_name IS NOT NULL
GROUP BY 1, 2;

-- Adds the signed requests of `rows` (sign, job_id, node_name, state, requests) to the sums.
CREATE FUNCTION "node_allocation_add"(rows jsonb) RETURNS void LANGUAGE sql AS $$
  INSERT INTO node_allocation AS a (cluster_name, node_name, cpu_millis, memory, gpu, gpu_memory, pods)
  SELECT j.cluster_name, r.node_name, sum(r.sign * r.cpu_millis), sum(r.sign * r.memory),
         sum(r.sign * (r.gpus + r.gpu_fraction::numeric)), sum(r.sign * r.gpu_memory), sum(r.sign)
  FROM jsonb_to_recordset(rows) AS r(sign int, job_id uuid, node_name text, cpu_millis bigint, memory numeric,
       gpus int, gpu_fraction float8, gpu_memory bigint)
  JOIN job j ON j.id = r.job_id
  WHERE j.cluster_name IS NOT NULL
  GROUP BY 1, 2
  HAVING sum(r.sign) <> 0 OR sum(r.sign * r.cpu_millis) <> 0 OR sum(r.sign * r.memory) <> 0
      OR sum(r.sign * (r.gpus + r.gpu_fraction::numeric)) <> 0 OR sum(r.sign * r.gpu_memory) <> 0
  ON CONFLICT (cluster_name, node_name) DO UPDATE SET
    cpu_millis = a.cpu_millis + EXCLUDED.cpu_millis,
    memory = a.memory + EXCLUDED.memory,
    gpu = a.gpu + EXCLUDED.gpu,
    gpu_memory = a.gpu_memory + EXCLUDED.gpu_memory,
    pods = a.pods + EXCLUDED.pods;
$$;

CREATE FUNCTION "pod_allocation_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  changed jsonb;
BEGIN
  IF TG_OP = 'INSERT' THEN
    SELECT jsonb_agg(jsonb_build_object('sign', 1, 'job_id', n.job_id, 'node_name', n.node_name,
             'cpu_millis', n.cpu_millis, 'memory', n.memory, 'gpus', n.gpus, 'gpu_fraction', n.gpu_fraction,
             'gpu_memory', n.gpu_memory))
      INTO changed FROM new_rows n
      WHERE n.state IN ('BINDING', 'RUNNING', 'RELEASING') AND n.node_name IS NOT NULL;
  ELSIF TG_OP = 'DELETE' THEN
    SELECT jsonb_agg(jsonb_build_object('sign', -1, 'job_id', o.job_id, 'node_name', o.node_name,
             'cpu_millis', o.cpu_millis, 'memory', o.memory, 'gpus', o.gpus, 'gpu_fraction', o.gpu_fraction,
             'gpu_memory', o.gpu_memory))
      INTO changed FROM old_rows o
      WHERE o.state IN ('BINDING', 'RUNNING', 'RELEASING') AND o.node_name IS NOT NULL;
  ELSE
    -- Only rows whose holding changed: a node confirmed running where it was bound adds nothing.
    SELECT jsonb_agg(x.r) INTO changed FROM (
      SELECT jsonb_build_object('sign', -1, 'job_id', o.job_id, 'node_name', o.node_name,
               'cpu_millis', o.cpu_millis, 'memory', o.memory, 'gpus', o.gpus, 'gpu_fraction', o.gpu_fraction,
               'gpu_memory', o.gpu_memory) AS r
        FROM old_rows o JOIN new_rows n ON n.id = o.id
        WHERE o.state IN ('BINDING', 'RUNNING', 'RELEASING') AND o.node_name IS NOT NULL
          AND NOT (n.state IN ('BINDING', 'RUNNING', 'RELEASING') AND n.node_name IS NOT DISTINCT FROM o.node_name
                   AND (n.cpu_millis, n.memory, n.gpus, n.gpu_fraction, n.gpu_memory)
                       = (o.cpu_millis, o.memory, o.gpus, o.gpu_fraction, o.gpu_memory))
      UNION ALL
      SELECT jsonb_build_object('sign', 1, 'job_id', n.job_id, 'node_name', n.node_name,
               'cpu_millis', n.cpu_millis, 'memory', n.memory, 'gpus', n.gpus, 'gpu_fraction', n.gpu_fraction,
               'gpu_memory', n.gpu_memory)
        FROM new_rows n JOIN old_rows o ON o.id = n.id
        WHERE n.state IN ('BINDING', 'RUNNING', 'RELEASING') AND n.node_name IS NOT NULL
          AND NOT (o.state IN ('BINDING', 'RUNNING', 'RELEASING') AND o.node_name IS NOT DISTINCT FROM n.node_name
                   AND (n.cpu_millis, n.memory, n.gpus, n.gpu_fraction, n.gpu_memory)
                       = (o.cpu_millis, o.memory, o.gpus, o.gpu_fraction, o.gpu_memory))
    ) x;
  END IF;
  IF changed IS NOT NULL THEN
    PERFORM node_allocation_add(changed);
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER "pod_allocation_insert" AFTER INSERT ON "pod" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "pod_allocation_changed"();
CREATE TRIGGER "pod_allocation_update" AFTER UPDATE ON "pod" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "pod_allocation_changed"();
CREATE TRIGGER "pod_allocation_delete" AFTER DELETE ON "pod" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "pod_allocation_changed"();
