// Backoff after failed binds: a pod whose bind failed is held back (Gated: the core leaves a gang
// with a gated pod unplaced) for base·2^(failures−1) ms, at most max, so a node that refuses pods
// is not hammered every cycle. Its gang, if partly running, stays below its minimum meanwhile and
// the stale-gang eviction handles it the KAI way when the grace period runs out first.
import type { Snapshot } from "../../src/core/index.js";
import type { BindFailure } from "../../src/store/index.js";

export interface BackoffPolicy {
  baseMs: number;
  maxMs: number;
}

export const backoffDelay = (failures: number, p: BackoffPolicy): number =>
  Math.min(p.maxMs, p.baseMs * 2 ** Math.max(0, failures - 1));

const backoffEnd = (f: BindFailure, p: BackoffPolicy): number =>
  f.lastFailedAt.getTime() + backoffDelay(f.failures, p);

/** The first moment after `now` a held-back pod may be placed again (Infinity: none waits). */
export function backoffExpiry(failures: readonly BindFailure[], policy: BackoffPolicy, now: number): number {
  let first = Number.POSITIVE_INFINITY;
  for (const f of failures) {
    const until = backoffEnd(f, policy);
    if (until > now && until < first) first = until;
  }
  return first;
}

/** Gates the held-back pods of the snapshot: their jobs are replaced by copies (the specs may be
 * a cache's, shared with later snapshots). Returns job id → why it waits. */
export function gateBackedOffPods(
  snapshot: Snapshot,
  failures: readonly BindFailure[],
  policy: BackoffPolicy,
): Map<string, string> {
  const waiting = new Map<string, BindFailure & { until: number }>();
  for (const f of failures) {
    const until = backoffEnd(f, policy);
    if (until > snapshot.now) waiting.set(f.podId, { ...f, until });
  }
  const notes = new Map<string, string>();
  if (!waiting.size) return notes;
  snapshot.jobs = snapshot.jobs.map((job) => {
    if (!job.pods.some((p) => waiting.has(p.uid) && p.status === "Pending")) return job;
    const pods = job.pods.map((pod) => {
      const w = waiting.get(pod.uid);
      if (!w || pod.status !== "Pending") return pod;
      if (!notes.has(job.uid))
        notes.set(
          job.uid,
          `bind of pod ${pod.name} to node ${w.lastNode} failed (${w.lastError ?? "no reason given"}; ` +
            `${w.failures} failure(s)); retrying after ${new Date(w.until).toISOString()}`,
        );
      return { ...pod, status: "Gated" as const };
    });
    return { ...job, pods };
  });
  return notes;
}
