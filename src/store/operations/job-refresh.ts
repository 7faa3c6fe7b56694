// A job's state follows its pods (domain/job-state); with it go its pending reason and the
// scheduler's bookkeeping. `refreshJob` is the rule for one job (pure: the commit planner runs it
// on snapshot rows); `refreshJobs` re-reads jobs after their pods changed and writes all of them
// in one statement, recording an event per state change and per changed pending reason.
import type { Tx } from "../db.js";
import { deriveJobState, type PodStateCounts } from "../domain/job-state.js";
import {
  awaitingAdmission,
  awaitingScheduler,
  type PendingReason,
  samePendingReason,
} from "../domain/pending-reason.js";
import type { NewEvent, RecordEvent } from "../events.js";
import type { JobState } from "../types.js";
import type { JobRow } from "../snapshot/rows.js";

/** What a session (or admission) says about a job besides its pods. Absent fields stay as they are. */
export interface JobNotes {
  pendingReason?: PendingReason;
  lastStartAt?: Date | null;
  staleSince?: Date | null;
}

export interface RefreshedJob {
  id: string;
  name: string;
  queue: string;
  cluster: string | null;
  from: JobState;
  to: JobState;
}

/** A job's row with what the refresh changes, and the events saying so. */
export interface JobRefresh {
  update: JobUpdate;
  events: NewEvent[];
  /** Set when the state changed. */
  refreshed: RefreshedJob | null;
}

/** What a refresh writes of a job. */
export type JobUpdate = Pick<JobRow, "id" | "state" | "pendingReason" | "lastStartAt" | "staleSince">;

/**
 * What refreshing one job changes: its state from its pods' states (`counts`; absent = its pods
 * did not change, the state stays), its pending reason and scheduler bookkeeping from `note`.
 * Null when nothing changes.
 */
export function refreshJob(
  job: JobRow,
  counts: PodStateCounts | undefined,
  note: JobNotes,
): JobRefresh | null {
  const state = counts ? deriveJobState(job.state, job.minMember, counts, job.workload) : job.state;
  const oldReason = job.pendingReason;
  const reason =
    state !== "PENDING"
      ? null
      : (note.pendingReason ??
        oldReason ??
        (job.clusterName ? awaitingScheduler(job.clusterName) : awaitingAdmission()));
  const lastStartAt = note.lastStartAt === undefined ? job.lastStartAt : note.lastStartAt;
  const staleSince = note.staleSince === undefined ? job.staleSince : note.staleSince;
  const reasonChanged = !samePendingReason(oldReason, reason);
  if (
    state === job.state &&
    !reasonChanged &&
    +(lastStartAt ?? 0) === +(job.lastStartAt ?? 0) &&
    +(staleSince ?? 0) === +(job.staleSince ?? 0)
  ) {
    return null;
  }
  const events: NewEvent[] = [];
  const event = { job: job.id, queue: job.queueName, cluster: job.clusterName };
  let refreshed: RefreshedJob | null = null;
  if (state !== job.state) {
    events.push({
      ...event,
      kind: `job.${state.toLowerCase()}`,
      message: `job ${job.name}: ${job.state} → ${state}`,
    });
    refreshed = {
      id: job.id,
      name: job.name,
      queue: job.queueName,
      cluster: job.clusterName,
      from: job.state,
      to: state,
    };
  }
  if (reason && reasonChanged && reason.message !== oldReason?.message) {
    events.push({ ...event, kind: "job.pending", message: `job ${job.name} pending: ${reason.message}` });
  }
  return { update: { id: job.id, state, pendingReason: reason, lastStartAt, staleSince }, events, refreshed };
}

export async function refreshJobs(
  tx: Tx,
  jobIds: readonly string[],
  now: Date,
  record: RecordEvent,
  notes: ReadonlyMap<string, JobNotes> = new Map(),
): Promise<RefreshedJob[]> {
  if (!jobIds.length) return [];
  const ids = [...new Set(jobIds)];
  // Each job with its pods' state counts, in one query over the jobs' pods only.
  const jobs = await tx.$queryRaw<
    (JobRow & { counts: PodStateCounts | null; createdAt: Date; started: boolean })[]
  >`
    SELECT j.id::text AS id, j.name, j.queue_name AS "queueName", j.cluster_name AS "clusterName",
      j.created_at AS "createdAt", j.started_at IS NOT NULL AS started,
      j.state::text AS state, j.min_member AS "minMember", j.pending_reason AS "pendingReason",
      j.last_start_at AS "lastStartAt", j.stale_since AS "staleSince", j.workload IS NOT NULL AS workload,
      (SELECT jsonb_object_agg(c.state, c.n) FROM
        (SELECT p.state::text AS state, count(*)::int AS n FROM pod p WHERE p.job_id = j.id GROUP BY p.state) c
      ) AS counts
    FROM job j WHERE j.id = ANY(${ids}::uuid[])`;

  const updates: JobUpdate[] = [];
  const refreshed: RefreshedJob[] = [];
  for (const { counts, createdAt, started, ...job } of jobs) {
    const r = refreshJob(job, counts ?? {}, notes.get(job.id) ?? {});
    if (!r) continue;
    updates.push(r.update);
    // The first start is stamped `now` (writeJobUpdates): its event says how long the job waited.
    const waitSeconds = Math.max(0, (now.getTime() - createdAt.getTime()) / 1000);
    for (const e of r.events)
      record(e.kind === "job.running" && !started ? { ...e, data: { waitSeconds } } : e);
    if (r.refreshed) refreshed.push(r.refreshed);
  }
  await writeJobUpdates(tx, updates, now);
  return refreshed;
}

/** Writes refreshed jobs in one statement, stamping when each was admitted, started, finished. */
export async function writeJobUpdates(tx: Tx, updates: readonly JobUpdate[], now: Date): Promise<void> {
  if (updates.length) {
    const rows = updates.map((u) => ({
      id: u.id,
      state: u.state,
      pending_reason: u.pendingReason,
      last_start_at: u.lastStartAt?.toISOString() ?? null,
      stale_since: u.staleSince?.toISOString() ?? null,
    }));
    await tx.$executeRaw`
      UPDATE job j SET
        state = v.state::"JobState",
        pending_reason = v.pending_reason,
        last_start_at = v.last_start_at,
        stale_since = v.stale_since,
        updated_at = ${now},
        admitted_at = CASE WHEN v.state IN ('ADMITTED', 'RUNNING') THEN COALESCE(j.admitted_at, ${now}) ELSE j.admitted_at END,
        started_at = CASE WHEN v.state = 'RUNNING' THEN COALESCE(j.started_at, ${now}) ELSE j.started_at END,
        finished_at = CASE WHEN v.state IN ('SUCCEEDED', 'FAILED', 'CANCELLED') THEN COALESCE(j.finished_at, ${now}) ELSE j.finished_at END
      FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
        AS v(id uuid, state text, pending_reason jsonb, last_start_at timestamp(3), stale_since timestamp(3))
      WHERE j.id = v.id`;
  }
}
