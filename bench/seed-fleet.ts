// Seeds a fleet for the admission and dry-run benchmarks with bulk SQL: clusters of nodes of 8
// GPUs, 128 CPUs and 1 TiB, each node running 6 one-GPU and 19 one-CPU pods (jobs of 5), 200 leaf
// queues under 4 departments. The rows are those the API and the agents write for such a state.
import type pg from "pg";

/** Per node: 6 one-GPU and 19 one-CPU running pods, in jobs of 5. */
export const GPU_PODS_PER_NODE = 6;
export const CPU_PODS_PER_NODE = 19;
export const POD_MEMORY = 4 * 2 ** 30;
export const LEAVES = 200;
export const leaf = (i: number) => `team-${String(i % LEAVES).padStart(3, "0")}`;

/** `clusters` READY clusters `c00`, `c01`, … of `nodes` nodes each, their running jobs, the queues. */
export async function seedFleet(c: pg.Client, clusters: number, nodes: number): Promise<void> {
  const CLUSTERS = clusters;
  const NODES = nodes;
  // The jobs run in "default": the departments allow it (admission checks the queue's policy).
  await c.query(`INSERT INTO queue (name, parent_name, priority, created_at, namespaces)
    SELECT 'dept-' || d, NULL, 100, now(), '{default}' FROM generate_series(0, 3) d`);
  await c.query(
    `INSERT INTO queue (name, parent_name, priority, created_at)
     SELECT 'team-' || lpad(t::text, 3, '0'), 'dept-' || (t % 4), 100, now() FROM generate_series(0, $1 - 1) t`,
    [LEAVES],
  );
  await c.query(
    `INSERT INTO cluster (name, labels, state, cordoned, generation)
     SELECT 'c' || lpad(k::text, 2, '0'), '{}', 'READY', false, 1 FROM generate_series(0, $1 - 1) k`,
    [CLUSTERS],
  );
  await c.query(
    `INSERT INTO node (cluster_name, name, labels, taints, unschedulable, ready, cpu_millis, memory, gpus,
       gpu_memory, max_pods, gpu_model, gpu_devices, updated_at)
     SELECT cl.name, 'node-' || lpad(n::text, 5, '0'), '{}', '[]', false, true, 128000, 1099511627776, 8,
       81920, 110, 'H100', '[]', now()
     FROM cluster cl, generate_series(0, $1 - 1) n`,
    [NODES],
  );
  // Running jobs of 5 pods; pod p of a cluster runs on node p % NODES, GPU pods first.
  const gpuJobs = (NODES * GPU_PODS_PER_NODE) / 5;
  const jobs = (NODES * (GPU_PODS_PER_NODE + CPU_PODS_PER_NODE)) / 5;
  await c.query(
    `CREATE TEMP TABLE seed_job AS
     SELECT cl.name AS cluster, k, gen_random_uuid() AS id, k < $2 AS gpu
     FROM cluster cl, generate_series(0, $1 - 1) k`,
    [jobs, gpuJobs],
  );
  await c.query(
    `INSERT INTO job (id, name, namespace, queue_name, cluster_name, cluster_selector, priority, preemptible,
       min_member, sub_groups, state, spec_hash, submitted_by, created_at, updated_at, admitted_at, started_at,
       last_start_at)
     SELECT id, 'run-' || k, 'default', 'team-' || lpad((k % $1)::text, 3, '0'), cluster, '[]', 50, true, 5, '[]',
       'RUNNING', 'bench', 'bench', now() - interval '1 hour', now(), now(), now(), now()
     FROM seed_job`,
    [LEAVES],
  );
  await c.query(
    `INSERT INTO job_task (job_id, name, replicas, cpu_millis, memory, gpus, gpu_fraction, gpu_memory, node_selector)
     SELECT id, 'w', 5, 1000, $1, CASE WHEN gpu THEN 1 ELSE 0 END, 0, 0, '[]' FROM seed_job`,
    [POD_MEMORY],
  );
  await c.query(
    `INSERT INTO pod (id, job_id, task_name, name, state, node_name, cpu_millis, memory, gpus, gpu_fraction,
       gpu_memory, created_at, updated_at, started_at)
     SELECT gen_random_uuid(), id, 'w', 'run-' || k || '-w-' || j, 'RUNNING',
       'node-' || lpad(((k * 5 + j) % $1)::text, 5, '0'), 1000, $2, CASE WHEN gpu THEN 1 ELSE 0 END, 0, 0,
       now(), now(), now()
     FROM seed_job, generate_series(0, 4) j`,
    [NODES, POD_MEMORY],
  );
  await c.query("DROP TABLE seed_job");
  await c.query("ANALYZE");
}
