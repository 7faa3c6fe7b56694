// When a cycle can be skipped, exactly: it would decide nothing new. That is when the cluster's
// cached view is the one the last cycle of this process decided on (no row of the cluster, its
// queues, quotas or usage changed since: the cache's version), that cycle decided nothing (no
// bind, eviction or pipeline, no search handed on), no search cursor waits for the cluster, and
// no time-dependent rule can change the result yet: the core says until when its result holds
// (min-runtime, stale-gang grace, cursor expiry) and the bind backoff until a held-back pod may
// be placed again. The configuration is the process's own and does not change under it.
import {
  resultHoldsUntil,
  type SchedulerConfig,
  type SessionResult,
  type Snapshot,
} from "../../src/core/index.js";
import type { BindFailure } from "../../src/store/index.js";
import { type BackoffPolicy, backoffExpiry } from "./bind-backoff.js";

export interface CycleMemory {
  /** The cache version of the cluster the last cycle decided on. */
  version: number;
  /** Until when (ms) its result holds; -Infinity when it decided something. */
  holdsUntil: number;
}

export function decidesNothing(result: SessionResult): boolean {
  return (
    result.binds.length === 0 &&
    result.evictions.length === 0 &&
    result.pipelines.length === 0 &&
    result.searchCursors.length === 0
  );
}

/** Until when a cycle's result holds (ms): -Infinity when it decided something. */
export function cycleHoldsUntil(
  snapshot: Snapshot,
  result: SessionResult,
  config: SchedulerConfig,
  failures: readonly BindFailure[],
  backoff: BackoffPolicy,
): number {
  if (!decidesNothing(result)) return Number.NEGATIVE_INFINITY;
  return Math.min(resultHoldsUntil(snapshot, result, config), backoffExpiry(failures, backoff, snapshot.now));
}

export function canSkip(
  seen: CycleMemory | undefined,
  view: { version: number },
  waitingSearches: number,
  now: number,
): boolean {
  return (
    seen !== undefined && seen.version === view.version && waitingSearches === 0 && now < seen.holdsUntil
  );
}
