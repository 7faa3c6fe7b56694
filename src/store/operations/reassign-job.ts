// Re-admission: a job admission placed on one cluster, still entirely unplaced there after a long
// wait, moves to another cluster. One transaction, fenced on the cluster it leaves: its generation
// is bumped so a session of that cluster planned before the move cannot place the job's pods. A
// move is an admission: a job its queue's policy no longer allows ends FAILED instead.
import { z } from "zod";
import { awaitingScheduler } from "../domain/pending-reason.js";
import { toJson } from "../json.js";
import { admissionRefusals } from "../domain/admission-refusals.js";
import type { EventRow } from "../events.js";
import { lockedQueuePolicies } from "../queries/queue-policy.js";
import { type Actor, publishCommitted, type Store, transact } from "../store.js";
import { clusterName } from "../validation/names.js";
import { invalidAt, parseInput } from "../validation/parse.js";
import { admittedJobRows, failRefused } from "./admission-decisions.js";
import { bumpGeneration, lockCluster } from "./cluster-fence.js";

const reassignInput = z
  .object({
    job: z.uuid("not a job id"),
    from: clusterName,
    to: clusterName,
    message: z.string().max(2000).optional(),
  })
  .strict()
  .refine((a) => a.from !== a.to, { message: "to must differ from from", path: ["to"] });

/**
 * Moves a PENDING job from cluster `from` to `to`. Returns false (and changes nothing) unless the
 * job is still PENDING on `from`, was not pinned to it by its submitter, and none of its pods is
 * placed, nominated or finished there (every pod PENDING).
 */
export async function reassignJobCluster(
  store: Store,
  actor: Actor,
  input: { job: string; from: string; to: string; message?: string },
): Promise<boolean> {
  const a = parseInput(reassignInput, input);
  const refused: EventRow[] = [];
  const moved = await transact(store, actor, async (tx, record) => {
    if (!(await tx.cluster.findUnique({ where: { name: a.to }, select: { name: true } })))
      throw invalidAt(["to"], `cluster "${a.to}" does not exist`);
    if (!(await lockCluster(tx, a.from))) return false;
    const job = await tx.job.findUnique({
      where: { id: a.job },
      select: {
        id: true,
        name: true,
        queueName: true,
        state: true,
        clusterName: true,
        requestedCluster: true,
      },
    });
    if (!job || job.state !== "PENDING" || job.clusterName !== a.from || job.requestedCluster) return false;
    const started = await tx.pod.count({ where: { jobId: a.job, state: { not: "PENDING" } } });
    if (started) return false;
    // Moving is admitting again: the job's templates are held to its queue's policy as it is now.
    const refusals = admissionRefusals(
      await admittedJobRows(tx, [job.id], a.from),
      await lockedQueuePolicies(tx, [job.queueName]),
    );
    if (refusals.length) {
      refused.push(...(await failRefused(tx, actor, refusals, a.from)));
      await bumpGeneration(tx, a.from);
      return false;
    }
    await tx.job.update({
      where: { id: a.job },
      data: { clusterName: a.to, pendingReason: toJson(awaitingScheduler(a.to)) },
    });
    await bumpGeneration(tx, a.from);
    record({
      kind: "job.reassigned",
      job: job.id,
      queue: job.queueName,
      cluster: a.to,
      message: `job ${job.name} moved from cluster ${a.from} to ${a.to}${a.message ? `: ${a.message}` : ""}`,
    });
    return true;
  });
  await publishCommitted(store, refused);
  return moved;
}
