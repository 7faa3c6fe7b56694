// After pods changed: recompute each affected job's state from its pods (domain/job-state),
// keep its pending reason and scheduler bookkeeping, write all jobs in one statement and record
// an event per state change and per changed pending reason.
import type { Tx } from "../db.js";
import { countPodStates, deriveJobState, type PodStateCounts } from "../domain/job-state.js";
import {
  awaitingAdmission,
  awaitingScheduler,
  type PendingReason,
  samePendingReason,
} from "../domain/pending-reason.js";
import type { RecordEvent } from "../events.js";
import type { JobState, PodState } from "../generated/prisma/enums.js";

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

interface JobRow {
  id: string;
  name: string;
  queueName: string;
  clusterName: string | null;
  state: JobState;
  minMember: number;
  pendingReason: unknown;
  lastStartAt: Date | null;
  staleSince: Date | null;
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
  const jobs: JobRow[] = await tx.job.findMany({
    where: { id: { in: ids } },
    select: {
      id: true,
      name: true,
      queueName: true,
      clusterName: true,
      state: true,
      minMember: true,
      pendingReason: true,
      lastStartAt: true,
      staleSince: true,
    },
  });
  const pods = await tx.pod.groupBy({
    by: ["jobId", "state"],
    where: { jobId: { in: ids } },
    _count: { _all: true },
  });
  const counts = new Map<string, PodStateCounts>();
  for (const p of pods) {
    const c = counts.get(p.jobId) ?? {};
    c[p.state as PodState] = p._count._all;
    counts.set(p.jobId, c);
  }

  const updates: Record<string, unknown>[] = [];
  const refreshed: RefreshedJob[] = [];
  for (const job of jobs) {
    const note = notes.get(job.id) ?? {};
    const state = deriveJobState(job.state, job.minMember, counts.get(job.id) ?? countPodStates([]));
    const oldReason = (job.pendingReason ?? null) as PendingReason | null;
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
      continue;
    }
    updates.push({
      id: job.id,
      state,
      pending_reason: reason,
      last_start_at: lastStartAt?.toISOString() ?? null,
      stale_since: staleSince?.toISOString() ?? null,
    });
    const event = { job: job.id, queue: job.queueName, cluster: job.clusterName };
    if (state !== job.state) {
      record({
        ...event,
        kind: `job.${state.toLowerCase()}`,
        message: `job ${job.name}: ${job.state} → ${state}`,
      });
      refreshed.push({
        id: job.id,
        name: job.name,
        queue: job.queueName,
        cluster: job.clusterName,
        from: job.state,
        to: state,
      });
    }
    if (reason && reasonChanged && reason.message !== oldReason?.message) {
      record({ ...event, kind: "job.pending", message: `job ${job.name} pending: ${reason.message}` });
    }
  }
  if (updates.length) {
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
      FROM jsonb_to_recordset(${JSON.stringify(updates)}::jsonb)
        AS v(id uuid, state text, pending_reason jsonb, last_start_at timestamp(3), stale_since timestamp(3))
      WHERE j.id = v.id`;
  }
  return refreshed;
}
