// A seeded cluster's running pods (bench/seed-cluster.ts), started on its simulated cluster before
// the agent runs: the agent then holds what the database says runs there, as a cluster the
// control plane has scheduled for a while would.
import { randomUUID } from "node:crypto";
import type { SimulatedBackend } from "../src/agent/backends/simulated/simulated-backend.js";
import { admin } from "../test/helpers/db.js";

/** Starts every RUNNING pod of `cluster` in the database at `url` on `backend`; returns how many. */
export async function preloadRunningPods(
  url: string,
  cluster: string,
  backend: SimulatedBackend,
): Promise<number> {
  const { rows } = await admin(
    (c) =>
      c.query<{
        job: string;
        job_name: string;
        queue: string;
        pod: string;
        node: string;
        cpu: number;
        memory: string;
        gpus: number;
      }>(
        `SELECT j.id::text AS job, j.name AS job_name, j.queue_name AS queue, p.name AS pod, p.node_name AS node,
                p.cpu_millis AS cpu, p.memory::text AS memory, p.gpus
         FROM pod p JOIN job j ON j.id = p.job_id WHERE p.state = 'RUNNING' AND j.cluster_name = $1`,
        [cluster],
      ),
    url,
  );
  const now = Date.now();
  for (const r of rows) {
    const effect = backend.cluster.bind(
      {
        id: randomUUID(),
        kind: "bind",
        cluster,
        generation: 1,
        job: {
          id: r.job,
          name: r.job_name,
          namespace: "default",
          queue: r.queue,
          createdInCluster: false,
          restarts: 0,
          workload: null,
        },
        pod: {
          name: r.pod,
          task: "worker",
          resources: {
            cpuMillis: r.cpu,
            memory: Number(r.memory),
            gpus: r.gpus,
            gpuFraction: 0,
            gpuMemory: 0,
          },
          durationSeconds: 365 * 86_400,
          exitFailure: false,
        },
        node: r.node,
        gpuGroups: [],
        gpuDevices: [],
        reason: "",
        attempt: 1,
      },
      now,
    );
    if (!effect.outcome.ok) throw new Error(`preloading ${r.job_name}/${r.pod}: ${effect.outcome.message}`);
  }
  return rows.length;
}
