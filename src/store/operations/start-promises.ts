// Pending jobs still waiting past the start their estimate first gave: the first estimate is kept
// as a promise (later estimates move with the queue), and its passing by more than a grace period
// is recorded once as `job.waiting_past_estimate`. A job that starts loses its promise; pending
// again, it gets a new one from its next estimate. Kept only while an enabled webhook asks for the
// event: nothing else reads it.
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

/** Keeps the promises up to date and reports those passed by more than `graceMs`. */
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
    if (!asked?.wanted) {
      await tx.$executeRaw`DELETE FROM job_start_promise`;
      return [];
    }
    await tx.$executeRaw`
      DELETE FROM job_start_promise p USING job j WHERE j.id = p.job_id AND j.state <> 'PENDING'`;
    await tx.$executeRaw`
      INSERT INTO job_start_promise (job_id, estimated_start)
      SELECT e.job_id, e.estimated_start FROM job_estimate e
      JOIN job j ON j.id = e.job_id AND j.state = 'PENDING'
      WHERE e.estimated_start IS NOT NULL
      ON CONFLICT (job_id) DO NOTHING`;
    const overdue = await tx.$queryRaw<OverdueJob[]>`
      UPDATE job_start_promise p SET notified_at = ${o.now}
      FROM job j
      WHERE j.id = p.job_id AND j.state = 'PENDING' AND p.notified_at IS NULL
        AND p.estimated_start < ${passedBefore}
      RETURNING j.id::text AS id, j.name, j.queue_name AS queue, j.cluster_name AS cluster,
        p.estimated_start AS "estimatedStart"`;
    for (const j of overdue) record(overdueEvent(j, o.now));
    return overdue;
  });
}
