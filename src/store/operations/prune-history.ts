// Retention: the event log, closed BindRequests and finished jobs (with their tasks, pods and
// BindRequests) older than a cutoff are deleted, a batch per statement so that no transaction
// holds many rows. Unfinished jobs and open BindRequests are never touched, whatever their age.
import { prismaOf } from "../client.js";
import type { Store } from "../store.js";

export interface PruneReport {
  events: number;
  bindRequests: number;
  jobs: number;
}

export const PRUNE_BATCH = 5_000;

/** Deletes what finished before `before`; returns how many rows of each kind went. */
export async function pruneHistory(store: Store, before: Date, batch = PRUNE_BATCH): Promise<PruneReport> {
  const db = prismaOf(store);
  const report: PruneReport = { events: 0, bindRequests: 0, jobs: 0 };
  const drain = async (step: () => Promise<number>): Promise<number> => {
    let total = 0;
    for (let n = batch; n >= batch; total += n) n = await step();
    return total;
  };
  report.jobs = await drain(
    () => db.$executeRaw`
      DELETE FROM job WHERE id IN (
        SELECT id FROM job WHERE state IN ('SUCCEEDED', 'FAILED', 'CANCELLED') AND finished_at < ${before}
        LIMIT ${batch})`,
  );
  report.bindRequests = await drain(
    () => db.$executeRaw`
      DELETE FROM bind_request WHERE id IN (
        SELECT id FROM bind_request WHERE state IN ('SUCCEEDED', 'FAILED') AND completed_at < ${before}
        LIMIT ${batch})`,
  );
  report.events = await drain(
    () => db.$executeRaw`
      DELETE FROM event WHERE id IN (SELECT id FROM event WHERE at < ${before} LIMIT ${batch})`,
  );
  return report;
}
