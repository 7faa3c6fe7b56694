// Admission's decisions for a whole pass, each kind in one transaction: jobs given their cluster,
// and why the others stay unadmitted. Same rules as assignJobCluster / setJobPendingReason, in
// bulk (a pass decides about up to a thousand jobs).
import { z } from "zod";
import { awaitingScheduler, type PendingReason, samePendingReason } from "../domain/pending-reason.js";
import { toJson } from "../json.js";
import { type Actor, type Store, transact } from "../store.js";
import { clusterName } from "../validation/names.js";
import { invalidAt, parseInput } from "../validation/parse.js";

const decisions = z.array(
  z
    .object({ job: z.uuid("not a job id"), cluster: clusterName, message: z.string().max(2000).optional() })
    .strict(),
);

/**
 * Gives each job its cluster, if it is still PENDING without one (a racing admitter may have won:
 * such jobs are left alone). Returns the ids of the jobs assigned.
 */
export async function assignJobClusters(
  store: Store,
  actor: Actor,
  input: { job: string; cluster: string; message?: string }[],
): Promise<string[]> {
  const list = parseInput(decisions, input);
  if (!list.length) return [];
  return transact(store, actor, async (tx, record) => {
    const names = [...new Set(list.map((d) => d.cluster))];
    const known = new Set(
      (await tx.cluster.findMany({ where: { name: { in: names } }, select: { name: true } })).map(
        (c) => c.name,
      ),
    );
    list.forEach((d, i) => {
      if (!known.has(d.cluster)) throw invalidAt([i, "cluster"], `cluster "${d.cluster}" does not exist`);
    });
    const assigned: string[] = [];
    for (const cluster of names) {
      const mine = list.filter((d) => d.cluster === cluster);
      const rows = await tx.job.updateManyAndReturn({
        where: { id: { in: mine.map((d) => d.job) }, state: "PENDING", clusterName: null },
        data: { clusterName: cluster, pendingReason: toJson(awaitingScheduler(cluster)) },
        select: { id: true, name: true, queueName: true },
      });
      const message = new Map(mine.map((d) => [d.job, d.message]));
      for (const job of rows) {
        const why = message.get(job.id);
        record({
          kind: "job.assigned",
          job: job.id,
          queue: job.queueName,
          cluster,
          message: `job ${job.name} assigned to cluster ${cluster}${why ? `: ${why}` : ""}`,
        });
        assigned.push(job.id);
      }
    }
    return assigned;
  });
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
