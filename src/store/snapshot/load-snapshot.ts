// The snapshot loader: one cluster's rows → the core's Snapshot, read in one REPEATABLE READ
// transaction (a consistent view) with a fixed handful of set queries, whatever the cluster's size.
import type { Snapshot } from "../../core/api/spec.js";
import { groupBy } from "../collections.js";
import type { Prisma, PrismaClient } from "../db.js";
import { isFinished, RESOURCE_HOLDING_POD_STATES, UNFINISHED_JOB_STATES } from "../domain/job-state.js";
import { DEFAULT_QUOTA_SCOPE, effectiveQuota, type QuotaRow } from "../domain/quotas.js";
import { NotFoundError } from "../errors.js";
import type { JobTask, Pod } from "../generated/prisma/client.js";
import type { UsageWindow } from "../domain/usage.js";
import { nodeSpec, podGroupSpec, queueSpec, TopologyRegistry } from "./map-rows.js";
import { queueUsageFractions, readyCapacity } from "./queue-usage.js";
import { type SnapshotRows, snapshotRows } from "./rows.js";

export interface LoadedSnapshot {
  snapshot: Snapshot;
  /** The cluster's generation the snapshot was read at: pass it to commitSession. */
  generation: number;
  /** The rows the snapshot was built from (every job in it and all its pods): pass them to
   * commitSession, which plans from them. */
  rows: SnapshotRows;
}

/** Jobs of the cluster the scheduler must see: unfinished ones, and finished ones whose pods
 * still hold node resources (a cancelled job's pods until the agent confirms their eviction). */
export const snapshotJobFilter = (cluster: string): Prisma.JobWhereInput => ({
  clusterName: cluster,
  OR: [
    { state: { in: UNFINISHED_JOB_STATES } },
    { pods: { some: { state: { in: RESOURCE_HOLDING_POD_STATES } } } },
  ],
});

export async function loadSnapshot(
  prisma: PrismaClient,
  cluster: string,
  opts: {
    now?: number;
    /** Time-based fair share: fill each queue's `usage` with its decayed usage on this cluster
     * (a fraction of the cluster's capacity). Absent = no usage (plain fair share). */
    usage?: UsageWindow;
  } = {},
): Promise<LoadedSnapshot> {
  const jobFilter = snapshotJobFilter(cluster);
  const now = opts.now ?? Date.now();
  const rows = await prisma.$transaction(
    async (tx) => {
      const clusterRow = await tx.cluster.findUnique({
        where: { name: cluster },
        select: { generation: true, cordoned: true },
      });
      if (!clusterRow) throw new NotFoundError("cluster", cluster);
      const nodes = await tx.node.findMany({ where: { clusterName: cluster }, orderBy: { name: "asc" } });
      return {
        cluster: clusterRow,
        nodes,
        usage: opts.usage
          ? await queueUsageFractions(tx, cluster, readyCapacity(nodes), new Date(now), opts.usage)
          : null,
        queues: await tx.queue.findMany({ orderBy: [{ createdAt: "asc" }, { name: "asc" }] }),
        quotas: await tx.queueQuota.findMany({ where: { scope: { in: [DEFAULT_QUOTA_SCOPE, cluster] } } }),
        jobs: await tx.job.findMany({ where: jobFilter, orderBy: [{ createdAt: "asc" }, { id: "asc" }] }),
        tasks: await tx.jobTask.findMany({ where: { job: jobFilter } }),
        pods: await tx.pod.findMany({ where: { job: jobFilter } }),
      };
    },
    { isolationLevel: "RepeatableRead", timeout: 60_000 },
  );

  const quotasByQueue = groupBy<QuotaRow, string>(rows.quotas, (q) => q.queueName);
  const tasksByJob = groupBy<JobTask, string>(rows.tasks, (t) => t.jobId);
  const podsByJob = groupBy<Pod, string>(rows.pods, (p) => p.jobId);
  const topologies = new TopologyRegistry();
  const jobs = rows.jobs
    .map((job) =>
      podGroupSpec(
        job,
        new Map((tasksByJob.get(job.id) ?? []).map((t) => [t.name, t])),
        podsByJob.get(job.id) ?? [],
        isFinished(job.state),
        topologies,
      ),
    )
    .filter((j) => j.pods.length > 0);

  return {
    generation: Number(rows.cluster.generation),
    rows: snapshotRows(rows.jobs, rows.pods),
    snapshot: {
      now,
      nodes: rows.nodes.map((n) => nodeSpec(n, rows.cluster.cordoned)),
      queues: rows.queues.map((q) => ({
        ...queueSpec(q, effectiveQuota(quotasByQueue.get(q.name) ?? [], cluster)),
        usage: rows.usage?.get(q.name) ?? null,
      })),
      jobs,
      topologies: topologies.topologies(),
    },
  };
}
