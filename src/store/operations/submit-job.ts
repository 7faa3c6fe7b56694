// submitJob: validate the spec, then, in one transaction, read the queue's policy with the rows of
// the queue and its ancestors locked FOR SHARE (a policy change waits, or came first and is seen),
// check the spec against it, and write the job, its task groups, one PENDING pod per replica and
// its event in ONE SQL statement (submission is the API's hot path: two statements in all),
// idempotent on (queue, idempotencyKey). A queue that does not exist is NOT_FOUND.
//
// Leaf check vs. concurrent tree changes: the statement takes FOR KEY SHARE NOWAIT on the queue
// row. createQueue/updateQueue/deleteQueue hold FOR UPDATE on it while they change the tree; a
// submit meeting that lock fails fast and retries with a fresh snapshot (so it sees the new
// children), and a tree change that comes second waits for the submit and then sees its job.
import { prismaOf } from "../client.js";
import { createHash } from "node:crypto";
import { awaitingAdmission, awaitingScheduler } from "../domain/pending-reason.js";
import type { PrismaClient, Tx } from "../db.js";
import { ConflictError, NotFoundError } from "../errors.js";
import type { Job, JobTask } from "../types.js";
import { uuidv7 } from "../ids.js";
import { type Actor, type Store, publishCommitted } from "../store.js";
import type { QueuePolicy } from "../domain/queue-policy.js";
import { type PolicyVersion, queuePolicy, versionedQueuePolicy } from "../queries/queue-policy.js";
import { jobPolicyError, withQueueNamespace } from "../validation/job-policy.js";
import type { ClusterPodPolicy } from "../validation/pod-policy.js";
import { clusterPodPolicies } from "../queries/cluster-pod-policy.js";
import { templateResourceError } from "../validation/template-resources.js";
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

/** The spec's fingerprint: a retry must carry the same spec as the first submission. Fields
 * added later count only when set, so that specs without them keep their fingerprint. */
export function specHash(spec: JobSpec): string {
  const {
    idempotencyKey: _key,
    labels,
    maxRuntimeSeconds,
    expectedRuntimeSeconds,
    restartPolicy,
    rendezvousPort,
    workload,
    ...base
  } = spec;
  const rest = {
    ...base,
    tasks: base.tasks.map(({ exitFailureAttempts, extendedResources, ...t }) => ({
      ...t,
      ...(exitFailureAttempts ? { exitFailureAttempts } : {}),
      ...(Object.keys(extendedResources).length ? { extendedResources } : {}),
    })),
    ...(Object.keys(labels).length ? { labels } : {}),
    ...(maxRuntimeSeconds !== null ? { maxRuntimeSeconds } : {}),
    ...(expectedRuntimeSeconds !== null ? { expectedRuntimeSeconds } : {}),
    ...(restartPolicy !== null ? { restartPolicy } : {}),
    ...(rendezvousPort !== null ? { rendezvousPort } : {}),
    ...(workload !== null ? { workload } : {}),
  };
  // memory is the only bigint: as a string, where it stands (the same text a replacer would give,
  // without calling one for every value of the templates)
  const json = JSON.stringify({
    ...rest,
    tasks: rest.tasks.map((t) => ({ ...t, memory: t.memory.toString() })),
  });
  return createHash("sha256").update(json).digest("hex");
}

async function replay(store: Store, spec: JobSpec, hash: string): Promise<SubmitResult | null> {
  if (!spec.idempotencyKey) return null;
  const job = await prismaOf(store).job.findUnique({
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

/** What the insert refuses the spec for (an unknown or inner queue, an unknown cluster), as the
 * clear error to answer with; null when it refuses nothing. */
export async function refusalOf(store: Store, spec: JobSpec): Promise<Error | null> {
  const queue = await prismaOf(store).queue.findUnique({
    where: { name: spec.queue },
    select: { _count: { select: { children: true } } },
  });
  if (!queue) return new NotFoundError("queue", spec.queue, "queue");
  if (queue._count.children > 0)
    return invalidAt(["queue"], `queue "${spec.queue}" has child queues; jobs go to leaf queues`);
  if (
    spec.cluster &&
    !(await prismaOf(store).cluster.findUnique({ where: { name: spec.cluster }, select: { name: true } }))
  ) {
    return invalidAt(["cluster"], `cluster "${spec.cluster}" does not exist`);
  }
  return null;
}

/** Why the statement inserted nothing (a replayed key aside). */
async function refusal(store: Store, spec: JobSpec): Promise<Error> {
  return (
    (await refusalOf(store, spec)) ?? new Error(`job ${spec.name} was not inserted for an unknown reason`)
  );
}

export function jobRow(spec: JobSpec, id: string, hash: string, submittedBy: string, now: Date): Job {
  return {
    id,
    name: spec.name,
    namespace: spec.namespace,
    queueName: spec.queue,
    requestedCluster: spec.cluster,
    clusterName: spec.cluster,
    clusterSelector: spec.clusterSelector,
    priority: spec.priority,
    preemptible: spec.preemptible,
    minMember: spec.minMember,
    subGroups: spec.subGroups as unknown as Job["subGroups"],
    topology: spec.topology as unknown as Job["topology"],
    state: "PENDING",
    pendingReason: (spec.cluster
      ? awaitingScheduler(spec.cluster)
      : awaitingAdmission()) as unknown as Job["pendingReason"],
    idempotencyKey: spec.idempotencyKey,
    specHash: hash,
    submittedBy,
    createdAt: now,
    updatedAt: now,
    admittedAt: null,
    startedAt: null,
    finishedAt: null,
    lastStartAt: null,
    staleSince: null,
    createdInCluster: false,
    labels: spec.labels,
    maxRuntimeSeconds: spec.maxRuntimeSeconds,
    expectedRuntimeSeconds: spec.expectedRuntimeSeconds,
    restartPolicy: spec.restartPolicy as unknown as Job["restartPolicy"],
    rendezvousPort: spec.rendezvousPort,
    restarts: 0,
    restartAfter: null,
    workload: spec.workload as unknown as Job["workload"],
  };
}

/** The job.submitted event's message. */
export function submittedMessage(spec: JobSpec): string {
  const pods = spec.tasks.reduce((n, t) => n + t.replicas, 0);
  return `job ${spec.name} submitted to ${spec.queue}${spec.cluster ? ` for cluster ${spec.cluster}` : ""}: ${pods} pod(s), gang minimum ${spec.minMember}`;
}

/** Input → a validated spec with every default (errors name fields of the input). */
export function parseSpec(input: SubmitJobInput): JobSpec {
  const spec = normaliseJobSpec(parseInput(submitJobInputSchema, input));
  const overAsk = templateResourceError(spec);
  if (overAsk) throw overAsk;
  return spec;
}

/** The spec against its queue's policy. */
export function checkPolicy(spec: JobSpec, policy: QueuePolicy, cluster?: ClusterPodPolicy): void {
  const refused = jobPolicyError(spec, policy, cluster);
  if (refused) throw refused;
}

/** The spec to store, made from (and checked against) its queue's policy as it holds when the job
 * is stored (read in the same transaction). */
export type SpecOf = (policy: QueuePolicy) => JobSpec;

export const LOCK_NOT_AVAILABLE = "55P03";
const FOREIGN_KEY_VIOLATION = "23503";

/** The Postgres error code of a failed raw query, through Prisma's error wrapping. */
export function pgCode(e: unknown): string | undefined {
  const err = e as {
    code?: string;
    meta?: { code?: string; driverAdapterError?: { cause?: { originalCode?: string; kind?: string } } };
    cause?: { code?: string };
  };
  return err.meta?.driverAdapterError?.cause?.originalCode ?? err.meta?.code ?? err.cause?.code;
}

/** The job written, with its event; null when its idempotency key was taken; STALE when a row
 * of its queue's policy changed since `version` was read (nothing written). */
async function insertJob(
  db: PrismaClient | Tx,
  job: Job,
  spec: JobSpec,
  message: string,
  actor: Actor,
  version: PolicyVersion,
): Promise<{ eventId: bigint; at: Date } | null | typeof STALE> {
  const tasks = spec.tasks.map((t, position) => ({ ...t, memory: t.memory.toString(), position }));
  const pods = spec.tasks.flatMap((t) =>
    Array.from({ length: t.replicas }, (_, i) => ({
      id: uuidv7(job.createdAt.getTime()),
      task: t.name,
      name: `${t.name}-${i}`,
      cpu: t.cpuMillis,
      memory: t.memory.toString(),
      gpus: t.gpus,
      fraction: t.gpuFraction,
      gpuMemory: t.gpuMemory,
    })),
  );
  // The policy's rows are locked FOR SHARE as they were read: a policy change committed since the
  // read leaves a row out and nothing is written (STALE); one in flight fails the lock at once
  // (NOWAIT: a statement that waited would still judge the tree by its older snapshot), and the
  // submit is tried again.
  const rows = await db.$queryRaw<{ held: number; event_id: bigint | null; at: Date | null }[]>`
    WITH held AS (
      SELECT q.name FROM queue q
      JOIN jsonb_to_recordset(${JSON.stringify(version)}::jsonb) AS s(name text, xid text)
        ON q.name = s.name AND q.change_xid::text = s.xid
      FOR SHARE OF q NOWAIT
    ), q AS (
      SELECT q.name FROM queue q
      WHERE q.name = ${job.queueName} AND NOT EXISTS (SELECT 1 FROM queue c WHERE c.parent_name = q.name)
        AND (SELECT count(*) FROM held) = ${version.length}
      FOR KEY SHARE OF q NOWAIT
    ), j AS (
      INSERT INTO job (id, name, namespace, queue_name, requested_cluster, cluster_name, cluster_selector, priority, preemptible,
        min_member, sub_groups, topology, state, pending_reason, idempotency_key, spec_hash, submitted_by, created_at, updated_at,
        labels, max_runtime_seconds, expected_runtime_seconds, restart_policy, rendezvous_port, workload)
      SELECT ${job.id}::uuid, ${job.name}, ${job.namespace}, q.name, ${job.requestedCluster}, ${job.clusterName},
        ${JSON.stringify(job.clusterSelector)}::jsonb, ${job.priority}, ${job.preemptible}, ${job.minMember},
        ${JSON.stringify(job.subGroups)}::jsonb, ${JSON.stringify(job.topology)}::jsonb, 'PENDING', ${JSON.stringify(job.pendingReason)}::jsonb,
        ${job.idempotencyKey}, ${job.specHash}, ${job.submittedBy}, ${job.createdAt}, ${job.createdAt},
        ${JSON.stringify(job.labels)}::jsonb, ${job.maxRuntimeSeconds}::int, ${job.expectedRuntimeSeconds}::int,
        NULLIF(${JSON.stringify(job.restartPolicy)}::jsonb, 'null'::jsonb), ${job.rendezvousPort}::int,
        NULLIF(${JSON.stringify(job.workload)}::jsonb, 'null'::jsonb)
      FROM q
      ON CONFLICT (queue_name, idempotency_key) DO NOTHING
      RETURNING id
    ), t AS (
      INSERT INTO job_task (job_id, name, replicas, cpu_millis, memory, gpus, gpu_fraction, gpu_memory, sub_group, node_selector,
        gpu_model, template, duration_seconds, exit_failure, exit_failure_attempts, position, extended_resources)
      SELECT j.id, v."name", v.replicas, v."cpuMillis", v.memory, v.gpus, v."gpuFraction", v."gpuMemory", v."subGroup", v."nodeSelector",
        v."gpuModel", NULLIF(v.template, 'null'::jsonb), v."durationSeconds", v."exitFailure", v."exitFailureAttempts", v.position,
        COALESCE(v."extendedResources", '{}'::jsonb)
      FROM j, jsonb_to_recordset(${JSON.stringify(tasks)}::jsonb) AS v("name" text, replicas int, "cpuMillis" int, memory bigint, gpus int,
        "gpuFraction" float8, "gpuMemory" int, "subGroup" text, "nodeSelector" jsonb, "gpuModel" text, template jsonb, "durationSeconds" int,
        "exitFailure" boolean, "exitFailureAttempts" int, position int, "extendedResources" jsonb)
    ), p AS (
      INSERT INTO pod (id, job_id, task_name, name, cpu_millis, memory, gpus, gpu_fraction, gpu_memory, created_at, updated_at)
      SELECT v.id, j.id, v.task, v."name", v.cpu, v.memory, v.gpus, v.fraction, v."gpuMemory", ${job.createdAt}, ${job.createdAt}
      FROM j, jsonb_to_recordset(${JSON.stringify(pods)}::jsonb) AS v(id uuid, task text, "name" text, cpu int, memory bigint, gpus int,
        fraction float8, "gpuMemory" int)
    ), e AS (
      INSERT INTO event (kind, message, job_id, queue_name, cluster_name, actor, at)
      SELECT 'job.submitted', ${message}, j.id, ${job.queueName}, ${job.clusterName}, ${actor.name}, ${job.createdAt} FROM j
      RETURNING id, at
    )
    SELECT (SELECT count(*) FROM held)::int AS held, e.id AS event_id, e.at FROM (SELECT 1) AS one LEFT JOIN e ON true`;
  const row = rows[0]!;
  if (row.held !== version.length) return STALE;
  return row.event_id !== null && row.at !== null ? { eventId: row.event_id, at: row.at } : null;
}

const STALE = Symbol("policy changed");

export async function submitJob(store: Store, actor: Actor, input: SubmitJobInput): Promise<SubmitResult> {
  const spec = parseSpec(input);
  // The cluster the job names holds it to its pod policy now; one chosen later, at admission.
  const cluster = (await clusterPodPolicies(prismaOf(store), [spec.cluster])).get(spec.cluster ?? "");
  return storeJobSpec(store, actor, spec.queue, (policy) => {
    const placed = withQueueNamespace(spec, policy);
    checkPolicy(placed, policy, cluster);
    return placed;
  });
}

interface Attempt {
  spec: JobSpec;
  hash: string;
  job: Job;
  message: string;
  inserted: { eventId: bigint; at: Date } | null;
}

/** The queue's policy read with the versions of its rows, the spec made and checked against it,
 * and the job written in one statement that holds those rows as read (STALE otherwise). Two
 * round trips, no transaction kept open across them. */
async function attemptStore(
  store: Store,
  actor: Actor,
  queue: string,
  specOf: SpecOf,
): Promise<Attempt | typeof STALE> {
  const read = await versionedQueuePolicy(prismaOf(store), queue);
  if (!read) throw new NotFoundError("queue", queue, "queue");
  const spec = specOf(read.policy);
  const hash = specHash(spec);
  const message = submittedMessage(spec);
  const now = new Date();
  const job = jobRow(spec, uuidv7(now.getTime()), hash, actor.name, now);
  const inserted = await insertJob(prismaOf(store), job, spec, message, actor, read.version);
  return inserted === STALE ? STALE : { spec, hash, job, message, inserted };
}

/** Writes the spec `specOf` makes from the policy of `queue` (submitJob's, submitWorkload's),
 * idempotent on its key. */
export async function storeJobSpec(
  store: Store,
  actor: Actor,
  queue: string,
  specOf: SpecOf,
): Promise<SubmitResult> {
  let made: JobSpec | null = null;
  const remember: SpecOf = (policy) => {
    made = specOf(policy);
    return made;
  };
  for (let attempt = 1; ; attempt++) {
    let tried: Attempt | typeof STALE;
    try {
      tried = await attemptStore(store, actor, queue, remember);
    } catch (e) {
      const code = pgCode(e);
      if (code === LOCK_NOT_AVAILABLE) {
        if (attempt >= 20)
          throw new ConflictError(`queue "${queue}" is being changed; submit again`, "queue");
        await new Promise((r) => setTimeout(r, 5 * attempt)); // the queue tree is being changed
        continue;
      }
      if (code === FOREIGN_KEY_VIOLATION) throw await refusal(store, made!); // the cluster went away
      throw e;
    }
    if (tried === STALE) {
      if (attempt >= 20) throw new ConflictError(`queue "${queue}" is being changed; submit again`, "queue");
      continue; // the policy changed between its read and the write: check the spec again
    }
    const { spec, hash, job, message, inserted } = tried;
    if (inserted) {
      await publishCommitted(store, [
        {
          id: inserted.eventId,
          at: inserted.at,
          kind: "job.submitted",
          message,
          jobId: job.id,
          queueName: job.queueName,
          clusterName: job.clusterName,
          actor: actor.name,
        },
      ]);
      return { job, created: true };
    }
    const seen = await replay(store, spec, hash);
    if (seen) return seen;
    throw await refusal(store, spec);
  }
}

/** The id a previewed job carries: a job's id is only known once it is submitted. */
export const PREVIEW_JOB_ID = "00000000-0000-0000-0000-000000000000";

/** The spec submitJob would write for `input`, checked as submitJob checks it (the queue's policy
 * included), without writing anything. */
export async function previewSpec(store: Store, input: SubmitJobInput): Promise<JobSpec> {
  const spec = parseSpec(input);
  const refused = await refusalOf(store, spec);
  if (refused) throw refused;
  const policy = await queuePolicy(prismaOf(store), spec.queue);
  if (!policy) throw new NotFoundError("queue", spec.queue, "queue");
  const placed = withQueueNamespace(spec, policy);
  checkPolicy(
    placed,
    policy,
    (await clusterPodPolicies(prismaOf(store), [spec.cluster])).get(spec.cluster ?? ""),
  );
  return placed;
}

/** The rows submitJob would write for `input` (checked as submitJob checks it, the queue's policy
 * included), without writing anything: for renderings of a job not yet submitted. */
export async function previewJob(
  store: Store,
  actor: Actor,
  input: SubmitJobInput,
): Promise<{ job: Job; tasks: JobTask[] }> {
  return specRows(await previewSpec(store, input), PREVIEW_JOB_ID, actor, new Date());
}

/** The job and task rows a spec is written as. */
export function specRows(spec: JobSpec, id: string, actor: Actor, now: Date): { job: Job; tasks: JobTask[] } {
  const job = jobRow(spec, id, specHash(spec), actor.name, now);
  return { job, tasks: spec.tasks.map((t, position) => taskRow(job.id, t, position)) };
}

function taskRow(jobId: string, t: JobSpec["tasks"][number], position: number): JobTask {
  return {
    jobId,
    name: t.name,
    replicas: t.replicas,
    cpuMillis: t.cpuMillis,
    memory: t.memory,
    gpus: t.gpus,
    gpuFraction: t.gpuFraction,
    gpuMemory: t.gpuMemory,
    subGroup: t.subGroup,
    nodeSelector: t.nodeSelector,
    gpuModel: t.gpuModel,
    template: t.template as JobTask["template"],
    durationSeconds: t.durationSeconds,
    exitFailure: t.exitFailure,
    exitFailureAttempts: t.exitFailureAttempts,
    position,
    extendedResources: t.extendedResources,
  };
}
