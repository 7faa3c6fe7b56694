// submitJob: validate the spec, check the queue and cluster, write the job, its task groups and
// one pod per replica as PENDING — one transaction, idempotent on (queue, idempotencyKey).
import { createHash } from "node:crypto";
import type { Tx } from "../db.js";
import { awaitingAdmission, awaitingScheduler } from "../domain/pending-reason.js";
import { ConflictError } from "../errors.js";
import { Prisma } from "../generated/prisma/client.js";
import type { Job } from "../generated/prisma/client.js";
import { toJson, toNullableJson } from "../json.js";
import { type Actor, type Store, transact } from "../store.js";
import { invalidAt, parseInput } from "../validation/parse.js";
import {
  type JobSpec,
  normaliseJobSpec,
  type SubmitJobInput,
  submitJobInputSchema,
} from "../validation/submit-job.js";

export interface SubmitResult {
  job: Job;
  /** false: the idempotency key was seen before and this is the job it created. */
  created: boolean;
}

/** The spec's fingerprint: a retry must carry the same spec as the first submission. */
function specHash(spec: JobSpec): string {
  const { idempotencyKey: _key, ...rest } = spec;
  const json = JSON.stringify(rest, (_k, v) => (typeof v === "bigint" ? v.toString() : v));
  return createHash("sha256").update(json).digest("hex");
}

async function replay(store: Store, spec: JobSpec, hash: string): Promise<SubmitResult | null> {
  if (!spec.idempotencyKey) return null;
  const job = await store.prisma.job.findUnique({
    where: { queueName_idempotencyKey: { queueName: spec.queue, idempotencyKey: spec.idempotencyKey } },
  });
  if (!job) return null;
  if (job.specHash !== hash) {
    throw new ConflictError(
      `idempotencyKey "${spec.idempotencyKey}" was already used in queue ${spec.queue} for a different job spec (job ${job.id})`,
      "idempotencyKey",
    );
  }
  return { job, created: false };
}

async function checkQueueAndCluster(tx: Tx, spec: JobSpec): Promise<void> {
  // FOR KEY SHARE: a concurrent createQueue/updateQueue cannot give this queue children until we commit.
  const queue = await tx.$queryRaw<{ children: bigint }[]>`
    SELECT (SELECT count(*) FROM queue c WHERE c.parent_name = q.name) AS children
    FROM queue q WHERE q.name = ${spec.queue} FOR KEY SHARE OF q`;
  if (!queue[0]) throw invalidAt(["queue"], `queue "${spec.queue}" does not exist`);
  if (queue[0].children > 0n)
    throw invalidAt(["queue"], `queue "${spec.queue}" has child queues; jobs go to leaf queues`);
  if (
    spec.cluster &&
    !(await tx.cluster.findUnique({ where: { name: spec.cluster }, select: { name: true } }))
  ) {
    throw invalidAt(["cluster"], `cluster "${spec.cluster}" does not exist`);
  }
}

async function insertJob(tx: Tx, spec: JobSpec, hash: string, submittedBy: string): Promise<Job> {
  const job = await tx.job.create({
    data: {
      name: spec.name,
      namespace: spec.namespace,
      queueName: spec.queue,
      requestedCluster: spec.cluster,
      clusterName: spec.cluster,
      clusterSelector: spec.clusterSelector,
      priority: spec.priority,
      preemptible: spec.preemptible,
      minMember: spec.minMember,
      subGroups: toJson(spec.subGroups),
      topology: toNullableJson(spec.topology),
      pendingReason: toJson(spec.cluster ? awaitingScheduler(spec.cluster) : awaitingAdmission()),
      idempotencyKey: spec.idempotencyKey,
      specHash: hash,
      submittedBy,
    },
  });
  await tx.jobTask.createMany({
    data: spec.tasks.map(({ replicas, template, ...t }) => ({
      ...t,
      jobId: job.id,
      replicas,
      template: toNullableJson(template),
    })),
  });
  await tx.pod.createMany({
    data: spec.tasks.flatMap((t) =>
      Array.from({ length: t.replicas }, (_, i) => ({
        jobId: job.id,
        taskName: t.name,
        name: `${t.name}-${i}`,
        cpuMillis: t.cpuMillis,
        memory: t.memory,
        gpus: t.gpus,
        gpuFraction: t.gpuFraction,
        gpuMemory: t.gpuMemory,
      })),
    ),
  });
  return job;
}

const isUniqueViolation = (e: unknown) =>
  e instanceof Prisma.PrismaClientKnownRequestError && e.code === "P2002";

export async function submitJob(store: Store, actor: Actor, input: SubmitJobInput): Promise<SubmitResult> {
  const spec = normaliseJobSpec(parseInput(submitJobInputSchema, input));
  const hash = specHash(spec);
  const seen = await replay(store, spec, hash);
  if (seen) return seen;
  try {
    return await transact(store, actor, async (tx, record) => {
      await checkQueueAndCluster(tx, spec);
      const job = await insertJob(tx, spec, hash, actor.name);
      const pods = spec.tasks.reduce((n, t) => n + t.replicas, 0);
      record({
        kind: "job.submitted",
        job: job.id,
        queue: spec.queue,
        cluster: spec.cluster,
        message: `job ${spec.name} submitted to ${spec.queue}${spec.cluster ? ` for cluster ${spec.cluster}` : ""}: ${pods} pod(s), gang minimum ${spec.minMember}`,
      });
      return { job, created: true };
    });
  } catch (e) {
    // A concurrent retry with the same key won the insert: answer with its job.
    if (isUniqueViolation(e)) {
      const winner = await replay(store, spec, hash);
      if (winner) return winner;
    }
    throw e;
  }
}
