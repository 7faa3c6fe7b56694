// submitJobs: many jobs (a CI matrix, a sweep) in ONE transaction — all of them or none. Each
// input is checked as submitJob checks it; the first bad one refuses the whole batch with its
// position in the field path ("[3].labels[0].key"). Idempotent per job: an input whose (queue,
// idempotencyKey) was seen before answers with that job (a different spec is a CONFLICT), so a
// retried batch creates only what is missing.
//
// The writes are one statement over two JSON arrays (jobs, task groups; the pods are made in SQL
// from the task rows, the events from the job rows), like submitJob's. In the same transaction, first
// the queues' policies are read with the rows of the queues and their ancestors locked FOR SHARE
// (one statement: a policy change waits for the batch, or came first and is seen) and every spec
// is checked against them; then the queues are locked FOR KEY SHARE NOWAIT (a queue tree change in
// progress: the batch retries), the clusters named FOR KEY SHARE (they cannot go away before the
// commit).
import { prismaOf } from "../client.js";
import { withQueueNamespace } from "../validation/job-policy.js";
import { clusterPodPolicies } from "../queries/cluster-pod-policy.js";
import type { Tx } from "../db.js";
import type { QueuePolicy } from "../domain/queue-policy.js";
import { ConflictError, InvalidInputError, NotFoundError } from "../errors.js";
import type { Job } from "../generated/prisma/client.js";
import { uuidv7 } from "../ids.js";
import { lockedQueuePolicies } from "../queries/queue-policy.js";
import { type Actor, publishCommitted, type Store } from "../store.js";
import type { EventRow } from "../events.js";
import { errorAt, formatPath, invalidAt } from "../validation/parse.js";
import { batchSpecParser, type JobSpec, type SubmitJobInput } from "../validation/submit-job.js";
import {
  checkPolicy,
  jobRow,
  LOCK_NOT_AVAILABLE,
  parseSpec,
  pgCode,
  type SubmitResult,
  specHash,
  submittedMessage,
} from "./submit-job.js";

export const MAX_BATCH_JOBS = 1000;
const DEADLOCK_DETECTED = "40P01";
/** All the pods of one batch: one transaction writes them. */
export const MAX_BATCH_PODS = 100_000;

interface Entry {
  spec: JobSpec;
  hash: string;
  job: Job;
  message: string;
  /** An earlier input of the batch with the same (queue, idempotencyKey): this one is its job. */
  sameAs: number | null;
}

const keyOf = (spec: JobSpec) => (spec.idempotencyKey ? `${spec.queue}\u0000${spec.idempotencyKey}` : null);

/** A batch's size, refused above the limit (before anything else is looked at). */
export function checkBatchSize(inputs: readonly unknown[]): void {
  if (!Array.isArray(inputs)) throw new InvalidInputError("", "inputs must be a list of jobs");
  if (inputs.length > MAX_BATCH_JOBS)
    throw new InvalidInputError(
      "",
      `at most ${MAX_BATCH_JOBS} jobs in one submitJobs (got ${inputs.length})`,
    );
}

/** The specs to store, made from (and checked against) their queues' policies as they hold when
 * the jobs are stored (read in the same transaction; a queue that does not exist is not there). */
export type SpecsOf = (policies: ReadonlyMap<string, QueuePolicy>) => JobSpec[];

/** The policy of the i-th input's queue; NOT_FOUND (naming the input) when it does not exist. */
export function policyAt(policies: ReadonlyMap<string, QueuePolicy>, queue: string, i: number): QueuePolicy {
  const policy = policies.get(queue);
  if (!policy) throw new NotFoundError("queue", queue, formatPath([i, "queue"]));
  return policy;
}

/** Checks every spec (in order; the first problem refuses the batch) and builds its row. */
function prepare(actor: Actor, specs: readonly JobSpec[]): Entry[] {
  const pods = specs.reduce((n, s) => n + s.tasks.reduce((m, t) => m + t.replicas, 0), 0);
  if (pods > MAX_BATCH_PODS)
    throw new InvalidInputError("", `at most ${MAX_BATCH_PODS} pods in one submitJobs (got ${pods})`);
  const now = new Date();
  // Ids in input order (sorted uuidv7s of one millisecond): the jobs list (newest first) shows
  // the batch in reverse, as if its jobs were submitted one after the other.
  const ids = specs.map(() => uuidv7(now.getTime())).sort();
  const firstOfKey = new Map<string, number>();
  return specs.map((spec, i) => {
    const hash = specHash(spec);
    const key = keyOf(spec);
    let sameAs: number | null = null;
    if (key) {
      const first = firstOfKey.get(key);
      if (first === undefined) firstOfKey.set(key, i);
      else if (specs[first] && specHash(specs[first]) !== hash)
        throw new ConflictError(
          `[${i}].idempotencyKey: "${spec.idempotencyKey}" is also the key of input ${first} of this batch, with a different job spec`,
          `[${i}].idempotencyKey`,
        );
      else sameAs = first;
    }
    const job = jobRow(spec, ids[i]!, hash, actor.name, now);
    return { spec, hash, job, message: submittedMessage(spec), sameAs };
  });
}

/** Locks the queues (leaves only) and the clusters named; the first input naming one that is
 * missing (or not a leaf) is refused. */
async function lockTargets(tx: Tx, entries: readonly Entry[]): Promise<void> {
  const queues = [...new Set(entries.map((e) => e.spec.queue))];
  const leaves = await tx.$queryRaw<{ name: string; leaf: boolean }[]>`
    SELECT q.name, NOT EXISTS (SELECT 1 FROM queue c WHERE c.parent_name = q.name) AS leaf
    FROM queue q WHERE q.name = ANY(${queues}::text[])
    ORDER BY q.name
    FOR KEY SHARE OF q NOWAIT`;
  const byName = new Map(leaves.map((q) => [q.name, q.leaf]));
  for (const [i, e] of entries.entries()) {
    const leaf = byName.get(e.spec.queue);
    if (leaf === undefined) throw new NotFoundError("queue", e.spec.queue, formatPath([i, "queue"]));
    if (!leaf)
      throw invalidAt([i, "queue"], `queue "${e.spec.queue}" has child queues; jobs go to leaf queues`);
  }
  const clusters = [...new Set(entries.map((e) => e.spec.cluster).filter((c) => c !== null))];
  if (!clusters.length) return;
  const found = new Set(
    (
      await tx.$queryRaw<{ name: string }[]>`
        SELECT name FROM cluster WHERE name = ANY(${clusters}::text[]) ORDER BY name FOR KEY SHARE`
    ).map((c) => c.name),
  );
  for (const [i, e] of entries.entries()) {
    if (e.spec.cluster !== null && !found.has(e.spec.cluster))
      throw invalidAt([i, "cluster"], `cluster "${e.spec.cluster}" does not exist`);
  }
}

/** Inserts the jobs whose key is new (with their tasks, pods and events); returns the ids inserted
 * and the events written. */
async function insertJobs(
  tx: Tx,
  entries: readonly Entry[],
  actor: Actor,
): Promise<{ inserted: Set<string>; events: EventRow[] }> {
  const fresh = entries.filter((e) => e.sameAs === null);
  const now = fresh[0]?.job.createdAt ?? new Date();
  const jobs = fresh.map((e) => ({
    id: e.job.id,
    name: e.job.name,
    namespace: e.job.namespace,
    queue: e.job.queueName,
    cluster: e.job.clusterName,
    selector: e.job.clusterSelector,
    priority: e.job.priority,
    preemptible: e.job.preemptible,
    minMember: e.job.minMember,
    subGroups: e.job.subGroups,
    topology: e.job.topology,
    reason: e.job.pendingReason,
    key: e.job.idempotencyKey,
    hash: e.job.specHash,
    labels: e.job.labels,
    maxRuntime: e.job.maxRuntimeSeconds,
    expectedRuntime: e.job.expectedRuntimeSeconds,
    restartPolicy: e.job.restartPolicy,
    rendezvousPort: e.job.rendezvousPort,
    workload: e.job.workload,
    message: e.message,
  }));
  const tasks = fresh.flatMap((e) =>
    e.spec.tasks.map((t, position) => ({ ...t, jobId: e.job.id, memory: t.memory.toString(), position })),
  );
  // Pods are made in SQL from their task rows (one per replica, "<task>-<i>"), ids UUIDv7 of
  // the submission's millisecond: a matrix of 1,000 jobs sends 1,000 task rows, not every pod.
  const ms = BigInt(now.getTime());
  const rows = await tx.$queryRaw<
    { id: bigint; at: Date; jobId: string; message: string; queueName: string; clusterName: string | null }[]
  >`
    WITH v AS (
      SELECT * FROM ROWS FROM (jsonb_to_recordset(${JSON.stringify(jobs)}::jsonb) AS (id uuid, "name" text, namespace text,
        queue text, cluster text, selector jsonb, priority int, preemptible boolean, "minMember" int, "subGroups" jsonb,
        topology jsonb, reason jsonb, "key" text, hash text, labels jsonb, "maxRuntime" int, "expectedRuntime" int,
        "restartPolicy" jsonb, "rendezvousPort" int, workload jsonb, message text)) WITH ORDINALITY AS v
    ), j AS (
      INSERT INTO job (id, name, namespace, queue_name, requested_cluster, cluster_name, cluster_selector, priority, preemptible,
        min_member, sub_groups, topology, state, pending_reason, idempotency_key, spec_hash, submitted_by, created_at, updated_at,
        labels, max_runtime_seconds, expected_runtime_seconds, restart_policy, rendezvous_port, workload)
      SELECT v.id, v."name", v.namespace, v.queue, v.cluster, v.cluster, v.selector, v.priority, v.preemptible,
        v."minMember", v."subGroups", NULLIF(v.topology, 'null'::jsonb), 'PENDING', v.reason, v."key", v.hash, ${actor.name},
        ${now}, ${now}, v.labels, v."maxRuntime", v."expectedRuntime", NULLIF(v."restartPolicy", 'null'::jsonb), v."rendezvousPort",
        NULLIF(v.workload, 'null'::jsonb)
      -- keys in one order for every batch: two batches sharing keys wait for each other, never in a cycle
      FROM v ORDER BY v.queue, v."key", v.ordinality
      ON CONFLICT (queue_name, idempotency_key) DO NOTHING
      RETURNING id
    ), x AS (
      SELECT x.* FROM jsonb_to_recordset(${JSON.stringify(tasks)}::jsonb) AS x("jobId" uuid, "name" text, replicas int,
        "cpuMillis" int, memory bigint, gpus int, "gpuFraction" float8, "gpuMemory" int, "subGroup" text, "nodeSelector" jsonb,
        "gpuModel" text, template jsonb, "durationSeconds" int, "exitFailure" boolean, "exitFailureAttempts" int, position int)
      JOIN j ON j.id = x."jobId"
    ), t AS (
      INSERT INTO job_task (job_id, name, replicas, cpu_millis, memory, gpus, gpu_fraction, gpu_memory, sub_group, node_selector,
        gpu_model, template, duration_seconds, exit_failure, exit_failure_attempts, position)
      SELECT x."jobId", x."name", x.replicas, x."cpuMillis", x.memory, x.gpus, x."gpuFraction", x."gpuMemory", x."subGroup",
        x."nodeSelector", x."gpuModel", NULLIF(x.template, 'null'::jsonb), x."durationSeconds", x."exitFailure",
        x."exitFailureAttempts", x.position
      FROM x
    ), p AS (
      INSERT INTO pod (id, job_id, task_name, name, cpu_millis, memory, gpus, gpu_fraction, gpu_memory, created_at, updated_at)
      SELECT encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid()) PLACING substring(int8send(${ms}::bigint) FROM 3)
          FROM 1 FOR 6), 52, 1), 53, 1), 'hex')::uuid,
        x."jobId", x."name", x."name" || '-' || g.i, x."cpuMillis", x.memory, x.gpus, x."gpuFraction", x."gpuMemory", ${now}, ${now}
      FROM x CROSS JOIN generate_series(0, x.replicas - 1) AS g(i)
    ), e AS (
      INSERT INTO event (kind, message, job_id, queue_name, cluster_name, actor, at)
      SELECT 'job.submitted', v.message, v.id, v.queue, v.cluster, ${actor.name}, ${now}
      FROM v JOIN j ON j.id = v.id ORDER BY v.ordinality
      RETURNING id, at, job_id, message, queue_name, cluster_name
    )
    SELECT e.id, e.at, e.job_id::text AS "jobId", e.message, e.queue_name AS "queueName",
      e.cluster_name AS "clusterName"
    FROM e ORDER BY e.id`;
  return {
    inserted: new Set(rows.map((r) => r.jobId)),
    events: rows.map((r) => ({ ...r, kind: "job.submitted", actor: actor.name })),
  };
}

/** Inputs whose key an earlier submission used: that job, if its spec is the same. */
async function replays(tx: Tx, entries: readonly Entry[], inserted: Set<string>): Promise<Map<number, Job>> {
  const seen = entries
    .map((e, i) => ({ e, i }))
    .filter(({ e }) => e.sameAs === null && !inserted.has(e.job.id));
  if (!seen.length) return new Map();
  const found = await tx.job.findMany({
    where: {
      OR: seen.map(({ e }) => ({ queueName: e.spec.queue, idempotencyKey: e.spec.idempotencyKey })),
    },
  });
  const byKey = new Map(found.map((j) => [`${j.queueName}\u0000${j.idempotencyKey}`, j]));
  const out = new Map<number, Job>();
  for (const { e, i } of seen) {
    const job = byKey.get(keyOf(e.spec)!);
    if (!job) throw new Error(`job ${e.spec.name} was not inserted for an unknown reason`);
    if (job.specHash !== e.hash)
      throw new ConflictError(
        `[${i}].idempotencyKey: "${e.spec.idempotencyKey}" was already used in queue ${e.spec.queue} for a different job spec (job ${job.id})`,
        `[${i}].idempotencyKey`,
      );
    out.set(i, job);
  }
  return out;
}

/**
 * Submits up to 1,000 jobs in one transaction: every one is created (or, for a repeated
 * idempotency key, answered with the job it created before), or — the first bad input refusing
 * the batch — none. Results in input order.
 */
export async function submitJobs(
  store: Store,
  actor: Actor,
  inputs: readonly SubmitJobInput[],
): Promise<SubmitResult[]> {
  checkBatchSize(inputs);
  const parse = batchSpecParser(parseSpec);
  const specs = inputs.map((input, i) => {
    try {
      return parse(input);
    } catch (e) {
      throw errorAt(e as Error, [i]);
    }
  });
  const clusters = await clusterPodPolicies(
    prismaOf(store),
    specs.map((s) => s.cluster),
  );
  return storeJobSpecs(
    store,
    actor,
    specs.map((s) => s.queue),
    (policies) =>
      specs.map((spec, i) => {
        try {
          const policy = policyAt(policies, spec.queue, i);
          const placed = withQueueNamespace(spec, policy);
          checkPolicy(placed, policy, clusters.get(spec.cluster ?? ""));
          return placed;
        } catch (e) {
          throw errorAt(e as Error, [i]);
        }
      }),
  );
}

/** Writes the specs `specsOf` makes from the policies of `queues` (one per input: submitJobs',
 * submitWorkloads') in one transaction, as submitJobs says. */
export async function storeJobSpecs(
  store: Store,
  actor: Actor,
  queues: readonly string[],
  specsOf: SpecsOf,
): Promise<SubmitResult[]> {
  if (!queues.length) return [];
  for (let attempt = 1; ; attempt++) {
    try {
      const { results, events } = await prismaOf(store).$transaction(
        async (tx) => {
          const entries = prepare(actor, specsOf(await lockedQueuePolicies(tx, queues)));
          await lockTargets(tx, entries);
          const { inserted, events } = await insertJobs(tx, entries, actor);
          const replayed = await replays(tx, entries, inserted);
          const results: SubmitResult[] = [];
          for (const [i, e] of entries.entries()) {
            if (e.sameAs !== null) results.push({ job: results[e.sameAs]!.job, created: false });
            else if (inserted.has(e.job.id)) results.push({ job: e.job, created: true });
            else results.push({ job: replayed.get(i)!, created: false });
          }
          return { results, events };
        },
        { timeout: 60_000, maxWait: 10_000 },
      );
      await publishCommitted(store, events);
      return results;
    } catch (e) {
      const code = pgCode(e);
      if (code !== LOCK_NOT_AVAILABLE && code !== DEADLOCK_DETECTED) throw e;
      if (attempt >= 20) throw new ConflictError("a queue of the batch is being changed; submit again", "");
      await new Promise((r) => setTimeout(r, 5 * attempt)); // the queue tree is being changed
    }
  }
}
