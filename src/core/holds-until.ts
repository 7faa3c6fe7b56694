// Until when a session's result holds: the first moment after the snapshot's `now` at which a
// session on the same snapshot could decide differently through the passing of time alone.
// Every rule of the core that reads the session clock is accounted for here:
//   - minruntime: a victim is protected until lastStartAt + its minimum runtime;
//   - stalegangeviction: a gang below its minimum is evicted at staleSince + the grace period;
//   - search cursors: a stopped search the snapshot hands on is dropped after the idle time;
//     a result that hands searches on holds no time at all (the search is still going on);
//   - a session stopped at its placement limit holds no time at all (the next places more);
//   - allocate stamps lastStartAt with `now`, which only a bind (a decision) does.
// Job and pod ages only break ties in orderings (creation times, not `now` − creation time).
import type { Snapshot } from "./api/spec.js";
import type { SessionResult } from "./api/result.js";
import type { SchedulerConfig } from "./framework/config.js";
import { defaultMinRuntimes, name as MIN_RUNTIME } from "./plugins/minruntime/index.js";

export function resultHoldsUntil(snapshot: Snapshot, result: SessionResult, config: SchedulerConfig): number {
  if (result.searchCursors.length || result.stoppedAtLimit) return snapshot.now;
  let until = Number.POSITIVE_INFINITY;
  const later = (t: number) => {
    if (t > snapshot.now && t < until) until = t;
  };
  const spans = minRuntimeSpans(snapshot, config);
  if (spans.length) {
    const starts = new Set<number>();
    for (const j of snapshot.jobs) if (j.lastStartAt !== null) starts.add(j.lastStartAt);
    for (const o of result.jobs) if (o.lastStartAt !== null) starts.add(o.lastStartAt);
    for (const start of starts) for (const s of spans) later(start + s);
  }
  const grace = config.session.stalenessGracePeriodSeconds;
  if (grace >= 0 && config.actions.includes("stalegangeviction"))
    for (const o of result.jobs) if (o.staleSince !== null) later(o.staleSince + grace * 1000);
  const idle = config.session.searchCursorIdleSeconds;
  if (idle >= 0) for (const c of snapshot.searchCursors ?? []) later(c.leftAt + idle * 1000 + 1);
  return until;
}

/** Every minimum runtime (ms) a job may be protected for: the plugin's defaults and every
 * queue's own. Empty when the plugin is not configured. */
function minRuntimeSpans(snapshot: Snapshot, config: SchedulerConfig): number[] {
  const option = config.tiers.flatMap((t) => t.plugins).find((p) => p.name === MIN_RUNTIME);
  if (!option) return [];
  const d = defaultMinRuntimes(option.arguments);
  const seconds = new Set([d.preempt, d.reclaim]);
  for (const q of snapshot.queues) {
    if (q.preemptMinRuntimeSeconds != null) seconds.add(q.preemptMinRuntimeSeconds);
    if (q.reclaimMinRuntimeSeconds != null) seconds.add(q.reclaimMinRuntimeSeconds);
  }
  return [...seconds].filter((s) => s > 0).map((s) => s * 1000);
}
