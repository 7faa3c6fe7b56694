// Pending jobs still waiting past the start their estimate first gave (later estimates move with
// the queue): its passing by more than a grace period is recorded once as
// `job.waiting_past_estimate`. A job that starts loses its estimate row; pending again, its next
// estimate is a new first one.
import type { NewEvent } from "../events.js";
import { type Actor, type Store, transact } from "../store.js";

export interface OverdueJob {
  id: string;
  name: string;
  queue: string;
  cluster: string | null;
  estimatedStart: Date;
}

const minutes = (ms: number) => `${Math.max(1, Math.round(ms / 60_000))} min`;

/** The event of a job waiting past its estimated start. */
export function overdueEvent(j: OverdueJob, now: Date): NewEvent {
  return {
    kind: "job.waiting_past_estimate",
    job: j.id,
    queue: j.queue,
    cluster: j.cluster,
    message: `job ${j.name} still pending ${minutes(now.getTime() - j.estimatedStart.getTime())} past its estimated start ${j.estimatedStart.toISOString()}`,
  };
}

/** Reports, once each, the pending jobs waiting more than `graceMs` past the first start their
 * estimate gave (`job_estimate.first_estimated_start`). With no enabled webhook asking for the
 * event, they are marked reported without an event: a webhook created later hears of new ones only. */
export async function reportOverdueStarts(
  store: Store,
  actor: Actor,
  o: { now: Date; graceMs: number },
): Promise<OverdueJob[]> {
  const passedBefore = new Date(o.now.getTime() - o.graceMs);
  return transact(store, actor, async (tx, record) => {
    const [asked] = await tx.$queryRaw<{ wanted: boolean }[]>`
      SELECT EXISTS (SELECT 1 FROM webhook
        WHERE enabled AND 'job.waiting_past_estimate' = ANY(events)) AS wanted`;
    const overdue = await tx.$queryRaw<OverdueJob[]>`
      UPDATE job_estimate e SET overdue_reported_at = ${o.now}
      FROM job j
      WHERE j.id = e.job_id AND j.state = 'PENDING' AND e.overdue_reported_at IS NULL
        AND e.first_estimated_start < ${passedBefore}
      RETURNING j.id::text AS id, j.name, j.queue_name AS queue, j.cluster_name AS cluster,
        e.first_estimated_start AS "estimatedStart"`;
    if (!asked?.wanted) return [];
    for (const j of overdue) record(overdueEvent(j, o.now));
    return overdue;
  });
}
