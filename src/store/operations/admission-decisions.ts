// Admission's decisions for a whole pass, each kind written at once: jobs given their cluster (one
// transaction, which first checks the jobs against their queues' current policies), and why the
// others stay unadmitted (one transaction). Same rules as assignJobCluster / setJobPendingReason,
// in bulk (a pass decides about up to a thousand jobs).
import { prismaOf } from "../client.js";
import { z } from "zod";
import type { Tx } from "../db.js";
import {
  type AdmissionRefusal,
  type AdmittedJobRows,
  admissionRefusals,
} from "../domain/admission-refusals.js";
import { awaitingScheduler, type PendingReason, samePendingReason } from "../domain/pending-reason.js";
import type { EventRow } from "../events.js";
import { lockedQueuePolicies } from "../queries/queue-policy.js";
import { type Actor, publishCommitted, type Store, transact } from "../store.js";
import { clusterName } from "../validation/names.js";
import { invalidAt, parseInput } from "../validation/parse.js";

const decisions = z.array(
  z
    .object({ job: z.uuid("not a job id"), cluster: clusterName, message: z.string().max(2000).optional() })
    .strict(),
);

type Decision = z.output<typeof decisions>[number];
type TaskRows = AdmittedJobRows["tasks"][number];

/** The jobs still to admit among `ids` (PENDING without a cluster, or PENDING on cluster `from`
 * when they move), with their task rows: one statement, the templates of these jobs only. */
export async function admittedJobRows(
  tx: Tx,
  ids: readonly string[],
  from: string | null = null,
): Promise<AdmittedJobRows[]> {
  const rows = await tx.$queryRaw<(Omit<AdmittedJobRows, "tasks"> & TaskRows)[]>`
    SELECT j.id::text AS id, j.name, j.namespace, j.queue_name AS "queueName", t.template,
      t.cpu_millis AS "cpuMillis", t.memory, t.gpus, t.extended_resources AS "extendedResources"
    FROM job j JOIN job_task t ON t.job_id = j.id
    WHERE j.id = ANY(${[...ids]}::uuid[]) AND j.state = 'PENDING' AND j.cluster_name IS NOT DISTINCT FROM ${from}
    ORDER BY j.id, t.position`;
  const jobs = new Map<string, AdmittedJobRows & { tasks: TaskRows[] }>();
  for (const { id, name, namespace, queueName, ...task } of rows) {
    let job = jobs.get(id);
    if (!job) {
      job = { id, name, namespace, queueName, tasks: [] };
      jobs.set(id, job);
    }
    job.tasks.push(task);
  }
  return [...jobs.values()];
}

/** Ends the refused jobs (if still PENDING without a cluster, or on cluster `from`) FAILED, their
 * pods FAILED, each with a `job.failed` event saying why. One statement. */
export async function failRefused(
  tx: Tx,
  actor: Actor,
  refusals: readonly AdmissionRefusal[],
  from: string | null = null,
): Promise<EventRow[]> {
  if (!refusals.length) return [];
  const rows = JSON.stringify(refusals.map((r, n) => ({ ...r, n })));
  return tx.$queryRaw<EventRow[]>`
    WITH v AS (SELECT * FROM jsonb_to_recordset(${rows}::jsonb) AS v(job uuid, message text, n int)),
    failed AS (
      UPDATE job j SET state = 'FAILED', pending_reason = NULL, finished_at = now(), updated_at = now()
      FROM v WHERE j.id = v.job AND j.state = 'PENDING' AND j.cluster_name IS NOT DISTINCT FROM ${from}
      RETURNING j.id, j.queue_name, v.message, v.n),
    pods AS (
      UPDATE pod p SET state = 'FAILED', message = f.message, updated_at = now(),
        finished_at = COALESCE(p.finished_at, now())
      FROM failed f WHERE p.job_id = f.id AND p.state IN ('PENDING', 'PIPELINED'))
    INSERT INTO event (kind, message, job_id, queue_name, cluster_name, actor)
    SELECT 'job.failed', f.message, f.id, f.queue_name, NULL, ${actor.name} FROM failed f ORDER BY f.n
    RETURNING id, at, kind, message, job_id::text AS "jobId", queue_name AS "queueName",
      cluster_name AS "clusterName", actor`;
}

/**
 * Gives each job its cluster, if it is still PENDING without one (a racing admitter may have won:
 * such jobs are left alone). Returns the ids of the jobs assigned. One transaction: the jobs'
 * queues' policies are read (their rows locked FOR SHARE: a policy change waits, or came first and
 * is seen) and each job's templates checked against them once; a job they no longer allow ends
 * FAILED with a `job.failed` event naming the queue, the field and the rule; the others and their
 * `job.assigned` events are written together, or nothing when a cluster named does not exist.
 */
export async function assignJobClusters(
  store: Store,
  actor: Actor,
  input: { job: string; cluster: string; message?: string }[],
): Promise<string[]> {
  const list = parseInput(decisions, input);
  if (!list.length) return [];
  const events = await prismaOf(store).$transaction(
    async (tx) => {
      const jobs = await admittedJobRows(
        tx,
        list.map((d) => d.job),
      );
      const policies = await lockedQueuePolicies(
        tx,
        jobs.map((j) => j.queueName),
      );
      const refusals = admissionRefusals(jobs, policies);
      const refused = new Set(refusals.map((r) => r.job));
      const failed = await failRefused(tx, actor, refusals);
      return [...failed, ...(await assign(tx, actor, list, refused))];
    },
    { timeout: 60_000, maxWait: 10_000 },
  );
  events.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  await publishCommitted(store, events);
  return events.filter((e) => e.kind === "job.assigned").map((e) => e.jobId!);
}

/** The assignments but the refused ones: the jobs and their `job.assigned` events. */
async function assign(
  tx: Tx,
  actor: Actor,
  list: readonly Decision[],
  refused: ReadonlySet<string>,
): Promise<EventRow[]> {
  if (list.every((d) => refused.has(d.job))) return [];
  const rows = JSON.stringify(
    list.flatMap((d, n) =>
      refused.has(d.job)
        ? []
        : [
            {
              job: d.job,
              cluster: d.cluster,
              why: d.message ? `: ${d.message}` : "",
              reason: awaitingScheduler(d.cluster),
              n,
            },
          ],
    ),
  );
  const out = await tx.$queryRaw<(EventRow & { missing: string | null })[]>`
    WITH v AS (
      SELECT * FROM jsonb_to_recordset(${rows}::jsonb)
        AS v(job uuid, cluster text, why text, reason jsonb, n int)),
    missing AS (
      SELECT v.cluster FROM v WHERE NOT EXISTS (SELECT 1 FROM cluster k WHERE k.name = v.cluster)),
    moved AS (
      UPDATE job j SET cluster_name = v.cluster, pending_reason = v.reason, updated_at = now()
      FROM v
      WHERE j.id = v.job AND j.state = 'PENDING' AND j.cluster_name IS NULL
        AND NOT EXISTS (SELECT 1 FROM missing)
      RETURNING j.id, j.name, j.queue_name, v.cluster, v.why, v.n),
    recorded AS (
      INSERT INTO event (kind, message, job_id, queue_name, cluster_name, actor)
      SELECT 'job.assigned', 'job ' || m.name || ' assigned to cluster ' || m.cluster || m.why, m.id,
        m.queue_name, m.cluster, ${actor.name}
      FROM moved m ORDER BY m.n
      RETURNING id, at, kind, message, job_id::text AS "jobId", queue_name AS "queueName",
        cluster_name AS "clusterName", actor)
    SELECT id, at, kind, message, "jobId", "queueName", "clusterName", actor, NULL::text AS missing
    FROM recorded
    UNION ALL SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, cluster FROM missing`;
  const missing = out.find((r) => r.missing !== null)?.missing;
  if (missing !== undefined && missing !== null) {
    const i = list.findIndex((d) => d.cluster === missing);
    throw invalidAt([i, "cluster"], `cluster "${missing}" does not exist`);
  }
  return out;
}

/** Records why each job is still PENDING; other states and unchanged reasons are skipped.
 * Returns how many jobs changed. */
export async function setJobPendingReasons(
  store: Store,
  actor: Actor,
  input: { job: string; reason: PendingReason }[],
): Promise<number> {
  parseInput(z.array(z.object({ job: z.uuid("not a job id") }).passthrough()), input);
  if (!input.length) return 0;
  return transact(store, actor, async (tx, record) => {
    const jobs = new Map(
      (
        await tx.job.findMany({
          where: { id: { in: input.map((d) => d.job) }, state: "PENDING" },
          select: { id: true, name: true, queueName: true, clusterName: true, pendingReason: true },
        })
      ).map((j) => [j.id, j]),
    );
    const changed = input.filter((d) => {
      const job = jobs.get(d.job);
      return job && !samePendingReason(job.pendingReason as PendingReason | null, d.reason);
    });
    if (!changed.length) return 0;
    const rows = JSON.stringify(changed.map((d) => ({ id: d.job, reason: d.reason })));
    await tx.$executeRaw`
      UPDATE job j SET pending_reason = v.reason, updated_at = now()
      FROM jsonb_to_recordset(${rows}::jsonb) AS v(id uuid, reason jsonb)
      WHERE j.id = v.id AND j.state = 'PENDING'`;
    for (const d of changed) {
      const job = jobs.get(d.job)!;
      if ((job.pendingReason as PendingReason | null)?.message === d.reason.message) continue;
      record({
        kind: "job.pending",
        job: job.id,
        queue: job.queueName,
        cluster: job.clusterName,
        message: `job ${job.name} pending: ${d.reason.message}`,
      });
    }
    return changed.length;
  });
}
