-- The pod triggers hand the rows whose holding changed to node_allocation_add as an array of a
-- row type instead of JSON: a commit moving thousands of pods spent most of its trigger time
-- building that JSON and parsing it again.
CREATE TYPE "pod_allocation_delta" AS (
  sign int, job_id uuid, node_name text, cpu_millis bigint, memory numeric, gpus int,
  gpu_fraction float8, gpu_memory bigint
);

CREATE FUNCTION "node_allocation_add"(rows pod_allocation_delta[]) RETURNS void LANGUAGE sql AS $$
  INSERT INTO node_allocation AS a (cluster_name, node_name, cpu_millis, memory, gpu, gpu_memory, pods)
  SELECT j.cluster_name, r.node_name, sum(r.sign * r.cpu_millis), sum(r.sign * r.memory),
         sum(r.sign * (r.gpus + r.gpu_fraction::numeric)), sum(r.sign * r.gpu_memory), sum(r.sign)
  FROM unnest(rows) AS r
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

CREATE OR REPLACE FUNCTION "pod_allocation_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  changed pod_allocation_delta[];
BEGIN
  IF TG_OP = 'INSERT' THEN
    SELECT array_agg(ROW(1, n.job_id, n.node_name, n.cpu_millis, n.memory, n.gpus, n.gpu_fraction,
             n.gpu_memory)::pod_allocation_delta)
      INTO changed FROM new_rows n
      WHERE n.state IN ('BINDING', 'RUNNING', 'RELEASING') AND n.node_name IS NOT NULL;
  ELSIF TG_OP = 'DELETE' THEN
    SELECT array_agg(ROW(-1, o.job_id, o.node_name, o.cpu_millis, o.memory, o.gpus, o.gpu_fraction,
             o.gpu_memory)::pod_allocation_delta)
      INTO changed FROM old_rows o
      WHERE o.state IN ('BINDING', 'RUNNING', 'RELEASING') AND o.node_name IS NOT NULL;
  ELSE
    -- Only rows whose holding changed: a node confirmed running where it was bound adds nothing.
    SELECT array_agg(x.r) INTO changed FROM (
      SELECT ROW(-1, o.job_id, o.node_name, o.cpu_millis, o.memory, o.gpus, o.gpu_fraction,
               o.gpu_memory)::pod_allocation_delta AS r
        FROM old_rows o JOIN new_rows n ON n.id = o.id
        WHERE o.state IN ('BINDING', 'RUNNING', 'RELEASING') AND o.node_name IS NOT NULL
          AND NOT (n.state IN ('BINDING', 'RUNNING', 'RELEASING') AND n.node_name IS NOT DISTINCT FROM o.node_name
                   AND (n.cpu_millis, n.memory, n.gpus, n.gpu_fraction, n.gpu_memory)
                       = (o.cpu_millis, o.memory, o.gpus, o.gpu_fraction, o.gpu_memory))
      UNION ALL
      SELECT ROW(1, n.job_id, n.node_name, n.cpu_millis, n.memory, n.gpus, n.gpu_fraction,
               n.gpu_memory)::pod_allocation_delta
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

DROP FUNCTION "node_allocation_add"(jsonb);
