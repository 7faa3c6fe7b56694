// Job operations besides submit: cancel (users), and the admission step's two writes.
import { z } from "zod";
import { isFinished } from "../domain/job-state.js";
import { awaitingScheduler, type PendingReason, samePendingReason } from "../domain/pending-reason.js";
import { ConflictError, NotFoundError } from "../errors.js";
import { Prisma } from "../generated/prisma/client.js";
import type { Job } from "../types.js";
import type { CreatedBindRequest } from "./bind-request-rows.js";
import { toJson } from "../json.js";
import { type Actor, type Store, transact } from "../store.js";
import { clusterName } from "../validation/names.js";
import { invalidAt, parseInput } from "../validation/parse.js";
import { lockCluster } from "./cluster-fence.js";
import { stopPodsOfJobs } from "./stop-pods.js";

const jobId = z.uuid("not a job id");

export interface CancelResult {
  job: Job;
  /** EVICT requests for the pods that held resources (state PENDING: the dispatcher sends them). */
  bindRequests: CreatedBindRequest[];
}

/**
 * Cancels a job: pods holding resources are evicted (→ RELEASING, an EVICT BindRequest each),
 * pods that never got resources end FAILED ("job cancelled"). Cancelling a cancelled job is a
 * no-op; a job that already succeeded or failed cannot be cancelled.
 */
export async function cancelJob(store: Store, actor: Actor, input: { id: string }): Promise<CancelResult> {
  const { id } = parseInput(z.object({ id: jobId }).strict(), input);
  for (let attempt = 1; ; attempt++) {
    try {
      return await cancelOnce(store, actor, id, new Date());
    } catch (err) {
      if (!(err instanceof ClusterMoved) || attempt >= 5) throw err;
    }
  }
}

/** The job changed cluster between the first read and its lock: the cancel starts over. */
class ClusterMoved extends Error {}

async function cancelOnce(store: Store, actor: Actor, id: string, now: Date): Promise<CancelResult> {
  return transact(store, actor, async (tx, record) => {
    const peek = await tx.job.findUnique({ where: { id }, select: { clusterName: true } });
    if (!peek) throw new NotFoundError("job", id, "id");
    // Lock the cluster first (the order every pod-changing operation uses), then the job: an
    // admission or a commit racing the cancel either happened before it and is seen here, or
    // waits for it and finds the job cancelled.
    if (peek.clusterName) await lockCluster(tx, peek.clusterName);
    await tx.$queryRaw`SELECT id FROM job WHERE id = ${id}::uuid FOR UPDATE`;
    const job = await tx.job.findUniqueOrThrow({ where: { id } });
    if (job.clusterName !== peek.clusterName) throw new ClusterMoved();
    if (job.state === "CANCELLED") return { job, bindRequests: [] };
    if (isFinished(job.state))
      throw new ConflictError(`job ${job.name} already ${job.state.toLowerCase()}`, "id");

    const cancelled = { message: "job cancelled", reason: `job cancelled by ${actor.name}` };
    const { evictedJobs, bindRequests } = await stopPodsOfJobs(
      tx,
      [id],
      job.clusterName,
      now,
      () => cancelled,
    );
    const updated = await tx.job.update({
      where: { id },
      data: { state: "CANCELLED", pendingReason: Prisma.DbNull, finishedAt: now },
    });
    record({
      kind: "job.cancelled",
      job: id,
      queue: job.queueName,
      cluster: job.clusterName,
      message: `job ${job.name} cancelled by ${actor.name}${evictedJobs.length ? `; evicting ${evictedJobs.length} pod(s)` : ""}`,
    });
    return { job: updated, bindRequests };
  });
}

/**
 * Admission: gives a PENDING job without a cluster its cluster. Returns false (and changes
 * nothing) when the job is no longer PENDING or already has a cluster — a racing admitter won.
 */
export async function assignJobCluster(
  store: Store,
  actor: Actor,
  input: { job: string; cluster: string; message?: string },
): Promise<boolean> {
  const a = parseInput(
    z.object({ job: jobId, cluster: clusterName, message: z.string().optional() }).strict(),
    input,
  );
  return transact(store, actor, async (tx, record) => {
    if (!(await tx.cluster.findUnique({ where: { name: a.cluster }, select: { name: true } }))) {
      throw invalidAt(["cluster"], `cluster "${a.cluster}" does not exist`);
    }
    const assigned = await tx.job.updateManyAndReturn({
      where: { id: a.job, state: "PENDING", clusterName: null },
      data: { clusterName: a.cluster, pendingReason: toJson(awaitingScheduler(a.cluster)) },
      select: { id: true, name: true, queueName: true },
    });
    const job = assigned[0];
    if (!job) return false;
    record({
      kind: "job.assigned",
      job: job.id,
      queue: job.queueName,
      cluster: a.cluster,
      message: `job ${job.name} assigned to cluster ${a.cluster}${a.message ? `: ${a.message}` : ""}`,
    });
    return true;
  });
}

const pendingReasonInput = z
  .object({
    job: jobId,
    reason: z
      .object({
        message: z.string().min(1, "message must not be empty"),
        clusters: z.array(
          z
            .object({
              cluster: z.string().min(1),
              message: z.string(),
              short: z.array(
                z.object({ resource: z.enum(["GPU", "CPU", "MEMORY"]), amount: z.number() }).strict(),
              ),
            })
            .strict(),
        ),
      })
      .strict(),
  })
  .strict();

/** Admission found no cluster for a PENDING job: record why (per cluster). No-op on other states. */
export async function setJobPendingReason(
  store: Store,
  actor: Actor,
  input: { job: string; reason: PendingReason },
): Promise<boolean> {
  const { job: id, reason } = parseInput(pendingReasonInput, input);
  return transact(store, actor, async (tx, record) => {
    const job = await tx.job.findUnique({
      where: { id },
      select: { name: true, queueName: true, clusterName: true, state: true, pendingReason: true },
    });
    if (!job) throw new NotFoundError("job", id, "job");
    if (job.state !== "PENDING") return false;
    const old = job.pendingReason as PendingReason | null;
    if (samePendingReason(old, reason)) return false;
    await tx.job.update({ where: { id }, data: { pendingReason: toJson(reason) } });
    if (old?.message !== reason.message) {
      record({
        kind: "job.pending",
        job: id,
        queue: job.queueName,
        cluster: job.clusterName,
        message: `job ${job.name} pending: ${reason.message}`,
      });
    }
    return true;
  });
}
