// Agent: the complete set of pods its cluster has, one page (a range of (job, pod) keys) at a
// time. A pod the control plane holds as BINDING, RUNNING or RELEASING on the cluster, inside
// the page's range, that the cluster does not have is gone: nobody will ever report it again
// (deleted or garbage-collected while the agent was away, or a simulated cluster restarted
// empty). It becomes FAILED ("pod vanished from cluster C") and releases its resources at
// once; its job then follows from its pods (domain/job-state: a gang still at its minimum runs
// on; below it, the scheduler's stale-gang eviction takes the rest after the grace period;
// the job ends FAILED once no pod is active; a job with a restart policy restarts its gang
// instead: gang-restarts.ts). A pod with a BindRequest in flight is left to
// that request's result: its pod may not exist yet, or is being evicted.
import { z } from "zod";
import { NotFoundError } from "../errors.js";
import { type Actor, type Store, transact } from "../store.js";
import { HOLDING_STATES_SQL } from "./pod-state-sql.js";
import { clusterName } from "../validation/names.js";
import { parseInput } from "../validation/parse.js";
import { bumpGeneration, lockCluster } from "./cluster-fence.js";
import { applyGangFailures } from "./gang-restarts.js";
import { refreshJobs } from "./job-refresh.js";
import { writePodChanges } from "./pod-changes.js";

/** The states that hold a node, as SQL (constants: the statement's text stays the same). */

const podRef = z
  .object({ job: z.uuid("not a job id"), pod: z.string().min(1, "pod must not be empty") })
  .strict();

const reportPodInventoryInput = z
  .object({
    cluster: clusterName,
    pods: z.array(podRef).max(10_000),
    after: podRef.nullish(),
    through: podRef.nullish(),
  })
  .strict()
  .superRefine((r, ctx) => {
    const key = (p: { job: string; pod: string }) => [p.job, p.pod] as const;
    const before = (a: readonly [string, string], b: readonly [string, string]) =>
      a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);
    if (r.after && r.through && !before(key(r.after), key(r.through)))
      ctx.addIssue({ code: "custom", path: ["through"], message: "through must come after after" });
    r.pods.forEach((p, i) => {
      if ((r.after && !before(key(r.after), key(p))) || (r.through && before(key(r.through), key(p))))
        ctx.addIssue({
          code: "custom",
          path: ["pods", i],
          message: `pod ${p.job}/${p.pod} is outside the page's range (after, through]`,
        });
    });
  });
export type ReportPodInventoryInput = z.input<typeof reportPodInventoryInput>;

export function vanishedMessage(cluster: string): string {
  return `pod vanished from cluster ${cluster}`;
}

/** Returns how many pods were failed as vanished. */
export async function reportPodInventory(
  store: Store,
  actor: Actor,
  input: ReportPodInventoryInput,
): Promise<number> {
  const r = parseInput(reportPodInventoryInput, input);
  const now = new Date();
  const present = new Set(r.pods.map((p) => `${p.job}/${p.pod}`));
  const afterJob = r.after?.job ?? null;
  const afterPod = r.after?.pod ?? "";
  const throughJob = r.through?.job ?? null;
  const throughPod = r.through?.pod ?? "";
  return transact(store, actor, async (tx, record) => {
    if (!(await lockCluster(tx, r.cluster))) throw new NotFoundError("cluster", r.cluster, "cluster");
    // Keys compare in code-unit order ("C"), as the agent orders its pages.
    const held = await tx.$queryRaw<
      { id: string; job_id: string; name: string; state: string; node_name: string | null }[]
    >`
      SELECT p.id, p.job_id::text AS job_id, p.name, p.state::text AS state, p.node_name
      FROM pod p JOIN job j ON j.id = p.job_id
      WHERE j.cluster_name = ${r.cluster}
        AND p.state IN (${HOLDING_STATES_SQL})
        AND (${afterJob}::text IS NULL
          OR (p.job_id::text COLLATE "C", p.name COLLATE "C") > (${afterJob}::text COLLATE "C", ${afterPod}::text COLLATE "C"))
        AND (${throughJob}::text IS NULL
          OR (p.job_id::text COLLATE "C", p.name COLLATE "C") <= (${throughJob}::text COLLATE "C", ${throughPod}::text COLLATE "C"))
        AND NOT EXISTS (
          SELECT 1 FROM bind_request b WHERE b.pod_id = p.id AND b.state IN ('PENDING', 'DISPATCHED'))
      FOR UPDATE OF p`;
    const vanished = held.filter((p) => !present.has(`${p.job_id}/${p.name}`));
    if (!vanished.length) return 0;
    const message = vanishedMessage(r.cluster);
    await writePodChanges(
      tx,
      vanished.map((p) => ({ id: p.id, state: "FAILED" as const, node: p.node_name, message })),
      now,
    );
    await bumpGeneration(tx, r.cluster);
    const byJob = new Map<string, string[]>();
    for (const p of vanished) byJob.set(p.job_id, [...(byJob.get(p.job_id) ?? []), p.name]);
    const jobs = await tx.job.findMany({
      where: { id: { in: [...byJob.keys()] } },
      select: { id: true, name: true, queueName: true },
    });
    for (const job of jobs) {
      record({
        kind: "pods.vanished",
        job: job.id,
        queue: job.queueName,
        cluster: r.cluster,
        message: `job ${job.name}: ${byJob.get(job.id)!.join(", ")} FAILED (${message})`,
      });
    }
    // A pod gone from its cluster unasked is a failure of its gang (a restart policy restarts it).
    const gang = await applyGangFailures(
      tx,
      r.cluster,
      vanished.map((p) => ({ jobId: p.job_id, pod: p.name, exitCode: null, node: p.node_name, message })),
      now,
      record,
    );
    await refreshJobs(tx, [...byJob.keys()], now, record, gang.notes);
    return vanished.length;
  });
}
