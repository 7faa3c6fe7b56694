// Seeds one large cluster fast with bulk SQL, in the shape of a busy KAI-scale cluster: nodes of
// 8 GPUs / 128 CPUs / 1 TiB, running jobs of 4–8 one-GPU or one-CPU pods spread over the nodes,
// pending gangs of 4 one-GPU pods, leaf queues under a few departments. The rows are those the
// API and the agents write for such a state (submitJob's columns; a placed pod RUNNING on its
// node, its job RUNNING with admitted/started/last-start times, as the committer and the pod
// reports leave them). Not written: the events and the succeeded BindRequests of that history,
// which no scheduling cycle reads.
//
//   await seedCluster(pgClient, "c1", clusterShape(4000));
import type pg from "pg";
import { awaitingScheduler } from "../src/store/domain/pending-reason.js";

export interface ClusterShape {
  nodes: number;
  /** Running one-GPU pods and one-CPU pods (in jobs of 4–8 pods). */
  gpuPods: number;
  cpuPods: number;
  /** Pending gangs of `gangSize` one-GPU pods. */
  pendingGangs: number;
  gangSize: number;
  departments: number;
  leafQueues: number;
  /** Digits of the node names (`node-00042`); 5 when absent. */
  nodeDigits?: number;
}

/** The shape per node count: at 4,000 nodes, 24,000 one-GPU and 76,000 one-CPU running pods,
 * 2,500 pending gangs of 4 (room for 2,000), 200 leaf queues under 4 departments. */
export function clusterShape(nodes: number): ClusterShape {
  return {
    nodes,
    gpuPods: 6 * nodes,
    cpuPods: 19 * nodes,
    pendingGangs: Math.round((nodes * 5) / 8),
    gangSize: 4,
    departments: 4,
    leafQueues: 200,
  };
}

const GIB = 1024 ** 3;
const NODE = { cpuMillis: 128_000, memory: 1024 * GIB, gpus: 8, gpuMemory: 81_920, maxPods: 110 };
/** What a seeded pod asks for, by kind. */
export const POD = {
  gpu: { cpuMillis: 4_000, memory: 32 * GIB },
  cpu: { cpuMillis: 1_000, memory: 4 * GIB },
};

export const leafQueue = (i: number) => `q-${String(i).padStart(3, "0")}`;

export interface JobPlan {
  kind: "gpu" | "cpu";
  size: number;
  running: boolean;
}

/** Running jobs of 4–8 pods (sizes cycling) until `pods`, then the pending gangs. */
export function plan(shape: ClusterShape): JobPlan[] {
  const jobs: JobPlan[] = [];
  for (const [kind, total] of [
    ["gpu", shape.gpuPods],
    ["cpu", shape.cpuPods],
  ] as const) {
    let left = total;
    for (let k = 0; left > 0; k++) {
      const size = Math.min(left, 4 + (k % 5));
      jobs.push({ kind, size, running: true });
      left -= size;
    }
  }
  for (let g = 0; g < shape.pendingGangs; g++)
    jobs.push({ kind: "gpu", size: shape.gangSize, running: false });
  return jobs;
}

export async function seedCluster(db: pg.Client, cluster: string, shape: ClusterShape): Promise<void> {
  const base = Date.now() - 3600_000;
  await db.query("BEGIN");
  await db.query(
    `INSERT INTO queue (name, parent_name, priority, created_at)
     SELECT 'dept-' || d, NULL, 100, to_timestamp($1::float8 / 1000) AT TIME ZONE 'UTC'
     FROM generate_series(0, $2::int - 1) d ON CONFLICT DO NOTHING`,
    [base, shape.departments],
  );
  await db.query(
    `INSERT INTO queue (name, parent_name, priority, created_at)
     SELECT 'q-' || lpad(i::text, 3, '0'), 'dept-' || (i % $2::int), 100,
            to_timestamp(($1::float8 + i) / 1000) AT TIME ZONE 'UTC'
     FROM generate_series(0, $3::int - 1) i ON CONFLICT DO NOTHING`,
    [base, shape.departments, shape.leafQueues],
  );
  // Each leaf deserves an equal part of the cluster's GPUs.
  await db.query(
    `INSERT INTO queue_quota (queue_name, scope, resource, deserved, "limit", over_quota_weight)
     SELECT 'q-' || lpad(i::text, 3, '0'), '*', 'GPU', $1::float8, NULL, NULL
     FROM generate_series(0, $2::int - 1) i ON CONFLICT DO NOTHING`,
    [Math.floor((shape.nodes * NODE.gpus) / shape.leafQueues), shape.leafQueues],
  );
  await db.query(
    `INSERT INTO cluster (name, state, generation, heartbeat_at) VALUES ($1, 'READY', 1, now() AT TIME ZONE 'UTC')`,
    [cluster],
  );
  await db.query(
    `INSERT INTO node (cluster_name, name, cpu_millis, memory, gpus, gpu_memory, max_pods, gpu_model)
     SELECT $1, 'node-' || lpad(i::text, $8::int, '0'), $3, $4, $5, $6, $7, 'A100' FROM generate_series(0, $2::int - 1) i`,
    [
      cluster,
      shape.nodes,
      NODE.cpuMillis,
      NODE.memory,
      NODE.gpus,
      NODE.gpuMemory,
      NODE.maxPods,
      shape.nodeDigits ?? 5,
    ],
  );
  const jobs = plan(shape);
  const cols = {
    n: jobs.map((_, i) => i),
    size: jobs.map((j) => j.size),
    gpus: jobs.map((j) => (j.kind === "gpu" ? 1 : 0)),
    cpu: jobs.map((j) => POD[j.kind].cpuMillis),
    memory: jobs.map((j) => POD[j.kind].memory),
    running: jobs.map((j) => j.running),
  };
  await db.query(
    `CREATE TEMP TABLE seed_job ON COMMIT DROP AS
     SELECT gen_random_uuid() AS id, v.n, v.size, v.gpus, v.cpu, v.memory, v.running,
            to_timestamp(($1::float8 + 1000 + v.n) / 1000) AT TIME ZONE 'UTC' AS at
     FROM unnest($2::int[], $3::int[], $4::int[], $5::int[], $6::bigint[], $7::bool[])
       AS v(n, size, gpus, cpu, memory, running)`,
    [base, cols.n, cols.size, cols.gpus, cols.cpu, cols.memory, cols.running],
  );
  await db.query(
    `INSERT INTO job (id, name, namespace, queue_name, requested_cluster, cluster_name, priority, preemptible,
       min_member, state, pending_reason, spec_hash, submitted_by, created_at, updated_at, admitted_at,
       started_at, last_start_at)
     SELECT s.id, 'job-' || s.n, 'default', 'q-' || lpad((s.n % $2::int)::text, 3, '0'), $1, $1, 100, true,
       s.size, CASE WHEN s.running THEN 'RUNNING'::"JobState" ELSE 'PENDING'::"JobState" END,
       CASE WHEN s.running THEN NULL ELSE $3::jsonb END, 'seed', 'bench', s.at, s.at,
       CASE WHEN s.running THEN s.at END, CASE WHEN s.running THEN s.at END, CASE WHEN s.running THEN s.at END
     FROM seed_job s`,
    [cluster, shape.leafQueues, JSON.stringify(awaitingScheduler(cluster))],
  );
  await db.query(
    `INSERT INTO job_task (job_id, name, replicas, cpu_millis, memory, gpus, gpu_fraction, gpu_memory)
     SELECT s.id, 'worker', s.size, s.cpu, s.memory, s.gpus, 0, 0 FROM seed_job s`,
  );
  // Running pods round-robin over the nodes, GPU pods and CPU pods each on their own count.
  await db.query(
    `INSERT INTO pod (id, job_id, task_name, name, state, node_name, cpu_millis, memory, gpus, gpu_fraction,
       gpu_memory, created_at, updated_at, started_at)
     SELECT gen_random_uuid(), p.id, 'worker', 'worker-' || p.g,
       CASE WHEN p.running THEN 'RUNNING'::"PodState" ELSE 'PENDING'::"PodState" END,
       CASE WHEN p.running THEN 'node-' || lpad(((p.k - 1) % $1::int)::text, $2::int, '0') END,
       p.cpu, p.memory, p.gpus, 0, 0, p.at, p.at, CASE WHEN p.running THEN p.at END
     FROM (SELECT s.*, g, row_number() OVER (PARTITION BY s.gpus, s.running ORDER BY s.n, g) AS k
           FROM seed_job s, generate_series(0, s.size - 1) g) p`,
    [shape.nodes, shape.nodeDigits ?? 5],
  );
  await db.query("COMMIT");
  // Statistics for the tables the seed filled only: a table analyzed while empty stays empty to
  // the planner (every lookup a sequential scan) as a run fills it, until it is analyzed again —
  // never, on a PostgreSQL without autovacuum. One never analyzed is sized from its pages.
  await db.query(jobs.length ? "ANALYZE" : "ANALYZE cluster, node, queue, queue_quota");
}
