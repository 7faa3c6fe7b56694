// Pod failures of jobs with a restart policy, inside the agent report that brought them (the
// caller holds the cluster's lock and has written the failed pods): each job's gang restarts or
// fails as domain/gang-restart decides. A restart evicts the pods on nodes (RELEASING, an EVICT
// request each), makes the others pending again, counts the restart and holds the next attempt
// back (restart_after; releaseRestartHolds lets it go); a failure stops the gang the way a
// run-time limit does. Jobs without a policy are left to follow their pods.
import type { Tx } from "../db.js";
import {
  type GangDecision,
  type GangPod,
  type PodFailure,
  planGangFailure,
  restartingReason,
  restartPolicyOf,
} from "../domain/gang-restart.js";
import { isFinished } from "../domain/job-state.js";
import { awaitingAdmission, awaitingScheduler, type PendingReason } from "../domain/pending-reason.js";
import type { RecordEvent } from "../events.js";
import { type Actor, type Store, transact } from "../store.js";
import { HOLDING_STATES_SQL } from "./pod-state-sql.js";
import type { Job, JobHead, PodState } from "../types.js";
import { createBindRequests } from "./bind-request-rows.js";
import { bumpGeneration } from "./cluster-fence.js";
import type { JobNotes } from "./job-refresh.js";
import { writePodChanges } from "./pod-changes.js";
import { stopPodsOfJobs } from "./stop-pods.js";

/** The states that hold a node, as SQL (constants: the statement's text stays the same). */

export interface GangFailure extends PodFailure {
  jobId: string;
}

export interface GangOutcome {
  /** Pending reasons of restarted jobs, for the refresh that follows. */
  notes: Map<string, JobNotes>;
}

type JobRow = Omit<JobHead, "clusterName"> & Pick<Job, "restarts" | "restartPolicy">;

/** Applies the failures (the first one of each job decides for it). */
export async function applyGangFailures(
  tx: Tx,
  cluster: string,
  failures: readonly GangFailure[],
  now: Date,
  record: RecordEvent,
): Promise<GangOutcome> {
  const outcome: GangOutcome = { notes: new Map() };
  const first = new Map<string, GangFailure>();
  for (const f of failures) if (!first.has(f.jobId)) first.set(f.jobId, f);
  if (!first.size) return outcome;
  const jobs = await tx.$queryRaw<JobRow[]>`
    SELECT id::text AS id, name, queue_name AS "queueName", state::text AS state, restarts,
      restart_policy AS "restartPolicy"
    FROM job WHERE id = ANY(${[...first.keys()]}::uuid[]) AND restart_policy IS NOT NULL FOR UPDATE`;
  if (!jobs.length) return outcome;
  const pods = await tx.$queryRaw<(GangPod & { jobId: string })[]>`
    SELECT id::text AS id, job_id::text AS "jobId", name, state::text AS state, node_name AS "nodeName"
    FROM pod WHERE job_id = ANY(${jobs.map((j) => j.id)}::uuid[]) FOR UPDATE`;
  const podsOf = new Map<string, GangPod[]>();
  for (const p of pods) {
    const list = podsOf.get(p.jobId);
    if (list) list.push(p);
    else podsOf.set(p.jobId, [p]);
  }

  const restarts: { job: JobRow; decision: Extract<GangDecision, { kind: "restart" }> }[] = [];
  const fails: { job: JobRow; message: string }[] = [];
  for (const job of jobs) {
    const decision = planGangFailure(
      { ...job, restartPolicy: restartPolicyOf(job.restartPolicy) },
      podsOf.get(job.id) ?? [],
      first.get(job.id)!,
      now,
    );
    if (decision.kind === "restart") restarts.push({ job, decision });
    else if (decision.kind === "fail") fails.push({ job, message: decision.message });
  }
  if (restarts.length) await restartGangs(tx, cluster, restarts, now, record, outcome);
  if (fails.length) await failGangs(tx, cluster, fails, now, record);
  return outcome;
}

async function restartGangs(
  tx: Tx,
  cluster: string,
  restarts: { job: JobRow; decision: Extract<GangDecision, { kind: "restart" }> }[],
  now: Date,
  record: RecordEvent,
  outcome: GangOutcome,
): Promise<void> {
  const releasing: PodState = "RELEASING";
  const changes = restarts.flatMap(({ decision: d }) => [
    ...d.evict.map((p) => ({
      id: p.id,
      state: releasing,
      node: p.nodeName,
      message: `gang restart: ${d.message}`,
    })),
    ...d.reset.map((p) => ({
      id: p.id,
      state: "PENDING" as const,
      node: null,
      gpuGroups: [],
      gpuDevices: [],
      message: `gang restart (attempt ${d.restarts + 1})`,
      newRun: true,
    })),
  ]);
  await writePodChanges(tx, changes, now);
  const generation = await bumpGeneration(tx, cluster);
  const evictions = restarts.flatMap(({ job, decision: d }) =>
    d.evict.map((p) => ({
      kind: "EVICT" as const,
      cluster,
      jobId: job.id,
      podId: p.id,
      node: p.nodeName!,
      gpuGroups: [],
      reason: `gang restart of job ${job.name}`,
    })),
  );
  await createBindRequests(tx, evictions, generation);
  const rows = restarts.map(({ job, decision: d }) => ({
    id: job.id,
    restarts: d.restarts,
    restart_after: d.restartAfter.toISOString(),
  }));
  // The attempt's clocks start again: its run-time limit and expected run time count from its start.
  await tx.$executeRaw`
    UPDATE job j SET restarts = v.restarts, restart_after = v.restart_after, started_at = NULL, updated_at = ${now}
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS v(id uuid, restarts int, restart_after timestamp(3))
    WHERE j.id = v.id`;
  for (const { job, decision: d } of restarts) {
    record({ kind: "job.restarted", job: job.id, queue: job.queueName, cluster, message: d.message });
    const reason: PendingReason = { message: restartingReason(d.restarts, d.restartAfter), clusters: [] };
    outcome.notes.set(job.id, { pendingReason: reason });
  }
}

async function failGangs(
  tx: Tx,
  cluster: string,
  fails: { job: JobRow; message: string }[],
  now: Date,
  record: RecordEvent,
): Promise<void> {
  const byJob = new Map(fails.map((f) => [f.job.id, f]));
  await stopPodsOfJobs(tx, [...byJob.keys()], cluster, now, (jobId) => ({
    message: byJob.get(jobId)!.message,
    reason: byJob.get(jobId)!.message,
  }));
  await tx.$executeRaw`
    UPDATE job SET state = 'FAILED', pending_reason = NULL, restart_after = NULL, finished_at = ${now}, updated_at = ${now}
    WHERE id = ANY(${[...byJob.keys()]}::uuid[])`;
  for (const { job, message } of fails)
    record({ kind: "job.failed", job: job.id, queue: job.queueName, cluster, message });
}

export interface ReleasedHolds {
  /** Jobs whose next attempt may be placed now. */
  jobs: number;
  /** Their clusters: a cycle there places them. */
  clusters: string[];
}

/**
 * Lets restarted gangs go: a job held since its restart whose pods have all left their nodes and
 * whose backoff has passed at `now` may be placed again; a hold on a finished job is dropped. One
 * statement: the hold only keeps the job's pods from being placed, so lifting it changes nothing a
 * session already planned on (no fence), and the cycle it triggers sees it through change tracking.
 */
export async function releaseRestartHolds(
  store: Store,
  actor: Actor,
  opts: { now?: Date } = {},
): Promise<ReleasedHolds> {
  const now = opts.now ?? new Date();
  return transact(store, actor, async (tx, record) => {
    const due = await tx.$queryRaw<(JobHead & Pick<Job, "restarts">)[]>`
      SELECT j.id::text AS id, j.name, j.queue_name AS "queueName", j.cluster_name AS "clusterName",
        j.state::text AS state, j.restarts
      FROM job j
      WHERE j.restart_after IS NOT NULL
        AND (j.state IN ('SUCCEEDED', 'FAILED', 'CANCELLED')
          OR (j.restart_after <= ${now}
            AND NOT EXISTS (SELECT 1 FROM pod p WHERE p.job_id = j.id AND p.state IN (${HOLDING_STATES_SQL}))))
      FOR UPDATE OF j`;
    if (!due.length) return { jobs: 0, clusters: [] };
    const waiting = due.filter((j) => !isFinished(j.state));
    const reasons = waiting
      .filter((j) => j.state === "PENDING")
      .map((j) => ({
        id: j.id,
        reason: j.clusterName ? awaitingScheduler(j.clusterName) : awaitingAdmission(),
      }));
    await tx.$executeRaw`
      UPDATE job j SET restart_after = NULL, updated_at = ${now},
        pending_reason = COALESCE(v.reason, j.pending_reason)
      FROM unnest(${due.map((j) => j.id)}::uuid[]) AS d(id)
      LEFT JOIN jsonb_to_recordset(${JSON.stringify(reasons)}::jsonb) AS v(id uuid, reason jsonb) ON v.id = d.id
      WHERE j.id = d.id`;
    const clusters = new Set<string>();
    for (const j of waiting) {
      if (j.clusterName) clusters.add(j.clusterName);
      record({
        kind: "job.pending",
        job: j.id,
        queue: j.queueName,
        cluster: j.clusterName,
        message: `job ${j.name}: attempt ${j.restarts + 1} may be placed (the previous attempt's pods have stopped)`,
      });
    }
    return { jobs: waiting.length, clusters: [...clusters] };
  });
}
