// Run-time limits: a placed job (ADMITTED or RUNNING) whose maxRuntimeSeconds have passed since it
// started (startedAt, when it first ran) is stopped the way a cancel stops a job — pods holding resources evicted (RELEASING,
// an EVICT BindRequest each), the others FAILED — and the job ends FAILED, its event and every
// pod's message naming the limit. One transaction per cluster, with the cluster row locked (the
// fence) and each job re-checked under its row lock: a job that finished or was cancelled in the
// meantime is left alone.
import { prismaOf } from "../client.js";
import type { PrismaClient, Tx } from "../db.js";
import { Prisma } from "../generated/prisma/client.js";
import type { JobHead, JobState } from "../types.js";
import { type Actor, type Store, transact } from "../store.js";
import type { RecordEvent } from "../events.js";
import { lockCluster } from "./cluster-fence.js";
import { stopPodsOfJobs } from "./stop-pods.js";

export interface StoppedJob {
  job: string;
  name: string;
  cluster: string | null;
  maxRuntimeSeconds: number;
  /** Pods evicted (an EVICT BindRequest each, PENDING in the outbox). */
  evicted: number;
}

export interface RuntimeLimitReport {
  stopped: StoppedJob[];
  /** Clusters with new EVICT BindRequests to send. */
  clusters: string[];
}

/** What a stopped job's pods and event say. */
export const runtimeLimitReason = (seconds: number) =>
  `run-time limit exceeded (maxRuntimeSeconds ${seconds})`;

/** A job past its limit: both columns are set on the jobs the query finds. */
interface Overdue extends JobHead {
  maxRuntimeSeconds: number;
  startedAt: Date;
}

/** Jobs whose pods are placed: the (state, created_at) index finds them without reading the
 * backlog of PENDING jobs. A job preempted back to PENDING past its limit is stopped as soon as
 * it is placed again. */
const LIMITED_STATES: JobState[] = ["ADMITTED", "RUNNING"];

async function overdueJobs(tx: Tx | PrismaClient, now: Date, limit: number, ids?: string[], lock = false) {
  return tx.$queryRaw<Overdue[]>`
    SELECT id::text AS id, name, queue_name AS "queueName", cluster_name AS "clusterName", state::text AS state,
      max_runtime_seconds AS "maxRuntimeSeconds", started_at AS "startedAt"
    FROM job
    WHERE state = ANY(${LIMITED_STATES}::"JobState"[]) AND max_runtime_seconds IS NOT NULL
      AND started_at IS NOT NULL AND started_at + max_runtime_seconds * interval '1 second' <= ${now}
      ${ids ? Prisma.sql`AND id = ANY(${ids}::uuid[])` : Prisma.empty}
    ORDER BY started_at, id
    LIMIT ${limit}
    ${lock ? Prisma.sql`FOR UPDATE` : Prisma.empty}`;
}

async function stopJobs(
  tx: Tx,
  jobs: readonly Overdue[],
  cluster: string | null,
  now: Date,
  record: RecordEvent,
): Promise<StoppedJob[]> {
  const ids = jobs.map((j) => j.id);
  const byJob = new Map(jobs.map((j) => [j.id, j]));
  const { evictedJobs } = await stopPodsOfJobs(tx, ids, cluster, now, (jobId) => {
    const reason = runtimeLimitReason(byJob.get(jobId)!.maxRuntimeSeconds);
    return { message: reason, reason };
  });
  await tx.job.updateMany({
    where: { id: { in: ids } },
    data: { state: "FAILED", pendingReason: Prisma.DbNull, finishedAt: now },
  });
  const evictedOf = new Map<string, number>();
  for (const job of evictedJobs) evictedOf.set(job, (evictedOf.get(job) ?? 0) + 1);
  return jobs.map((j) => {
    const evicted = evictedOf.get(j.id) ?? 0;
    const ran = Math.round((now.getTime() - j.startedAt.getTime()) / 1000);
    record({
      kind: "job.failed",
      job: j.id,
      queue: j.queueName,
      cluster: j.clusterName,
      message: `job ${j.name} failed: ${runtimeLimitReason(j.maxRuntimeSeconds)}; started ${ran}s ago${evicted ? `; evicting ${evicted} pod(s)` : ""}`,
    });
    return {
      job: j.id,
      name: j.name,
      cluster: j.clusterName,
      maxRuntimeSeconds: j.maxRuntimeSeconds,
      evicted,
    };
  });
}

/**
 * Stops every placed job (ADMITTED or RUNNING) past its run-time limit at `now` (at most `limit` per call, the
 * longest overdue first). Returns what it stopped and the clusters whose outbox got evictions.
 */
export async function stopJobsPastRuntimeLimit(
  store: Store,
  actor: Actor,
  opts: { now?: Date; limit?: number } = {},
): Promise<RuntimeLimitReport> {
  const now = opts.now ?? new Date();
  const candidates = await overdueJobs(prismaOf(store), now, opts.limit ?? 500);
  const byCluster = new Map<string | null, string[]>();
  for (const j of candidates) {
    const list = byCluster.get(j.clusterName);
    if (list) list.push(j.id);
    else byCluster.set(j.clusterName, [j.id]);
  }
  const stopped: StoppedJob[] = [];
  const clusters: string[] = [];
  for (const [cluster, ids] of byCluster) {
    const done = await transact(store, actor, async (tx, record) => {
      // The cluster first (the order every pod-changing operation uses), then the jobs, re-read:
      // still placed, still overdue, still on this cluster.
      if (cluster && !(await lockCluster(tx, cluster))) return [];
      const jobs = (await overdueJobs(tx, now, ids.length, ids, true)).filter(
        (j) => j.clusterName === cluster,
      );
      return jobs.length ? stopJobs(tx, jobs, cluster, now, record) : [];
    });
    stopped.push(...done);
    if (cluster && done.some((j) => j.evicted > 0)) clusters.push(cluster);
  }
  return { stopped, clusters };
}
