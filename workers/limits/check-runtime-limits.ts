// The workers' run-time limit check (store: stopJobsPastRuntimeLimit): jobs past their
// maxRuntimeSeconds end FAILED and their pods are evicted; the evictions go out with the next
// cycle of each cluster concerned (the caller triggers it), else with the outbox sweeper.
import type { Logger } from "pino";
import { type RuntimeLimitReport, type Store, stopJobsPastRuntimeLimit } from "../../src/store/index.js";
import { jobsPastRuntimeLimit } from "../metrics.js";

const CHECKER = { name: "runtime-limit-check" };

export async function checkRuntimeLimits(
  store: Store,
  log: Logger,
  opts: { now?: Date } = {},
): Promise<RuntimeLimitReport> {
  const report = await stopJobsPastRuntimeLimit(store, CHECKER, { now: opts.now });
  if (report.stopped.length) {
    jobsPastRuntimeLimit.inc(report.stopped.length);
    log.info({ stopped: report.stopped }, "jobs stopped at their run-time limit");
  }
  return report;
}
