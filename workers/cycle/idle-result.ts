// A session that changed nothing on a cluster where nothing waits: no pod moves, no pod is
// Pending (so no pending reason or pipelined nomination to refresh), and every job's scheduler
// bookkeeping (last start, stale since) is what the snapshot already holds. Committing it would
// write nothing but still lock the cluster and re-read every job: the cycle skips the commit.
import type { SessionResult, Snapshot } from "../../src/core/index.js";

export function isIdleResult(snapshot: Snapshot, result: SessionResult): boolean {
  if (result.binds.length || result.pipelines.length || result.evictions.length || result.pods.length)
    return false;
  // Newest first: a job still waiting is most often one of the last submitted.
  const specs = snapshot.jobs;
  for (let i = specs.length - 1; i >= 0; i--)
    for (const p of specs[i]!.pods) if (p.status === "Pending" || p.status === "Gated") return false;
  const jobs = new Map(specs.map((j) => [j.uid, j]));
  return result.jobs.every((o) => {
    const j = jobs.get(o.uid);
    return j !== undefined && j.lastStartAt === o.lastStartAt && j.staleSince === o.staleSince;
  });
}
