// The workers' lost-cluster check (store: markLostClusters): marks clusters whose agent went
// silent, sends their unplaced jobs back to admission, optionally requeues the rest, and says
// so in the log and metrics.
import type { Logger } from "pino";
import { type LostClusterReport, markLostClusters, type Store } from "../../src/store/index.js";
import { jobsMovedFromLostClusters } from "../metrics.js";

export interface LostCheckOptions {
  lostAfterMs: number;
  /** 0 = jobs with placed pods wait for the agent to come back. */
  requeueAfterMs: number;
  now?: Date;
}

const CHECKER = { name: "lost-cluster-check" };

export async function checkLostClusters(
  store: Store,
  o: LostCheckOptions,
  log: Logger,
): Promise<LostClusterReport> {
  const report = await markLostClusters(store, CHECKER, {
    now: o.now ?? new Date(),
    lostAfterMs: o.lostAfterMs,
    requeueAfterMs: o.requeueAfterMs || null,
  });
  if (report.readmitted) jobsMovedFromLostClusters.inc({ how: "readmitted" }, report.readmitted);
  if (report.requeued) jobsMovedFromLostClusters.inc({ how: "requeued" }, report.requeued);
  if (report.lost.length || report.readmitted || report.requeued) log.warn(report, "lost clusters");
  return report;
}
