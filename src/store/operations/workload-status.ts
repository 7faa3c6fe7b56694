// Agent: what a workload's object (a Job, JobSet, PyTorchJob, MPIJob) says of itself. Its end
// ends its job — SUCCEEDED or FAILED, the object's reason in the event — and its pods that never
// ran with it; anything else it says (a restart of its own, by its failure policy or backoff
// limit) becomes an event of the job. Idempotent: a finished job stays as it ended.
import { z } from "zod";
import { isFinished } from "../domain/job-state.js";
import { NotFoundError } from "../errors.js";
import { type Actor, type Store, transact } from "../store.js";
import type { JobHead } from "../types.js";
import { clusterName } from "../validation/names.js";
import { invalidAt, parseInput } from "../validation/parse.js";
import { bumpGeneration, lockCluster } from "./cluster-fence.js";
import { writePodChanges } from "./pod-changes.js";

const reportInput = z
  .object({
    cluster: clusterName,
    updates: z
      .array(
        z
          .object({
            job: z.uuid("not a job id"),
            state: z.enum(["RUNNING", "SUCCEEDED", "FAILED"], "a workload is RUNNING, SUCCEEDED or FAILED"),
            reason: z.string().max(200).nullish(),
            message: z.string().max(2000).nullish(),
          })
          .strict(),
      )
      .max(1000),
  })
  .strict();
export type ReportWorkloadStatusInput = z.input<typeof reportInput>;

interface WorkloadJob extends JobHead {
  kind: string | null;
}

/** Returns how many jobs the reports changed (ended, or told of). */
export async function reportWorkloadStatus(
  store: Store,
  actor: Actor,
  input: ReportWorkloadStatusInput,
): Promise<number> {
  const r = parseInput(reportInput, input);
  const now = new Date();
  return transact(store, actor, async (tx, record) => {
    if (!(await lockCluster(tx, r.cluster))) throw new NotFoundError("cluster", r.cluster, "cluster");
    const ids = [...new Set(r.updates.map((u) => u.job))];
    const jobs = new Map(
      (
        await tx.$queryRaw<WorkloadJob[]>`
          SELECT id::text AS id, name, queue_name AS "queueName", cluster_name AS "clusterName",
            state::text AS state, workload->>'kind' AS kind
          FROM job WHERE id = ANY(${ids}::uuid[]) FOR UPDATE`
      ).map((j) => [j.id, j]),
    );
    const ended: { job: WorkloadJob; state: "SUCCEEDED" | "FAILED" }[] = [];
    let told = 0;
    r.updates.forEach((u, i) => {
      const job = jobs.get(u.job);
      if (!job || job.clusterName !== r.cluster || job.kind === null)
        throw invalidAt(["updates", i, "job"], `job ${u.job} is not a workload on cluster ${r.cluster}`);
      if (isFinished(job.state)) return;
      const why = [u.reason, u.message].filter(Boolean).join(": ");
      const event = { job: job.id, queue: job.queueName, cluster: r.cluster };
      if (u.state === "RUNNING") {
        record({
          ...event,
          kind: "workload.status",
          message: `job ${job.name}: its ${job.kind} says ${why || "it runs"}`,
        });
        told++;
        return;
      }
      const verb = u.state === "SUCCEEDED" ? "succeeded" : "failed";
      record({
        ...event,
        kind: `job.${verb}`,
        message: `job ${job.name} ${verb}: its ${job.kind} ended ${u.state}${why ? ` (${why})` : ""}`,
      });
      job.state = u.state;
      ended.push({ job, state: u.state });
    });
    if (!ended.length) return told;
    const endedIds = ended.map((e) => e.job.id);
    const rows = ended.map((e) => ({ id: e.job.id, state: e.state }));
    await tx.$executeRaw`
      UPDATE job j SET state = v.state::"JobState", pending_reason = NULL, restart_after = NULL,
        finished_at = COALESCE(j.finished_at, ${now}), updated_at = ${now},
        started_at = CASE WHEN v.state = 'SUCCEEDED' THEN COALESCE(j.started_at, ${now}) ELSE j.started_at END
      FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS v(id uuid, state text)
      WHERE j.id = v.id`;
    // Its pods that never ran with it will not: they end with it.
    const waiting = await tx.$queryRaw<{ id: string }[]>`
      SELECT id::text AS id FROM pod WHERE job_id = ANY(${endedIds}::uuid[]) AND state IN ('PENDING', 'PIPELINED')`;
    if (waiting.length) {
      await writePodChanges(
        tx,
        waiting.map((p) => ({
          id: p.id,
          state: "FAILED" as const,
          node: null,
          gpuGroups: [],
          gpuDevices: [],
          message: "its workload ended",
        })),
        now,
      );
      await bumpGeneration(tx, r.cluster);
    }
    return told + ended.length;
  });
}
