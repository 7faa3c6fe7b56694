// A necessary condition for a scenario, cheap enough to check before simulating it.
// Every whole GPU the preemptor is pipelined onto must come from a device that is idle or
// releasing now, or from a victim the scenario leaves evicted: the simulation only moves
// GPUs between those. So when the preemptor's whole GPUs exceed what is free plus what the
// victims that may stay evicted could free, no node of the scenario can give a valid
// solution, and the scenario (or the whole prefix) is skipped without simulating — the
// outcome KAI reaches by simulating and failing. Whole-GPU victims that "must move"
// (consolidation: all; reclaim: those of queues the proportion rules protect) free nothing
// net: wherever they go they take the devices they free.
import type { NodeInfo } from "../../../api/node-info.js";
import type { PodInfo } from "../../../api/pod-info.js";
import type { JobInfo } from "../../../api/podgroup-info.js";
import { isActiveAllocated } from "../../../api/status.js";
import type { JobFreeable, LastingMemos } from "../../../framework/memo.js";
import type { Session } from "../../../framework/session.js";

/** Whole GPUs the tasks need (shared and MIG requests count none: they need no whole device). */
export function wholeGpuDemand(tasks: readonly PodInfo[]): number {
  let n = 0;
  for (const t of tasks) if (t.req.kind === "regular") n += t.req.gpuDevices;
  return n;
}

/** At most how many whole devices evicting `t` can free (a shared pod at most its devices). */
export function freedGpus(t: PodInfo): number {
  return t.req.kind === "regular" || t.req.isShared ? t.req.gpuDevices : 0;
}

/** Idle plus releasing whole devices over the nodes (a node's negative balance counts 0). */
export function freeWholeGpus(nodes: readonly NodeInfo[]): number {
  let n = 0;
  for (const node of nodes) {
    const v = node.idle.gpus + node.releasing.gpus;
    if (v > 0) n += v;
  }
  return n;
}

/** freeWholeGpus of the session's nodes, counted again only when a node changed since. */
export function sessionFreeWholeGpus(ssn: Session): number {
  const c = ssn.memos.freeWholeGpus;
  if (c && c.changes === ssn.nodeChanges.length) return c.free;
  const free = freeWholeGpus(ssn.nodes);
  ssn.memos.freeWholeGpus = { changes: ssn.nodeChanges.length, free };
  return free;
}

/** What evicting every placed pod of `job` could free (kept with the job, carried with it). */
function jobFreeable(memos: LastingMemos, job: JobInfo): JobFreeable {
  const c = memos.freeable.get(job);
  const revision = memos.revision(job);
  if (c && c.revision === revision) return c;
  const f: JobFreeable = { revision, whole: 0, shared: 0 };
  for (const p of job.pods) {
    if (!isActiveAllocated(p.status)) continue;
    if (p.req.isShared) f.shared += freedGpus(p);
    else f.whole += freedGpus(p);
  }
  memos.freeable.set(job, f);
  return f;
}

/**
 * Whole devices the placed pods of `jobs` could free, up to `enough`: every pod of a job
 * that may stay evicted; of the others only shared pods — a whole-GPU pod that may only
 * be moved takes as many devices as it frees, while moving a shared pod onto another
 * shared device can empty its old one.
 */
export function freeableGpus(
  ssn: Session,
  jobs: readonly JobInfo[],
  mayStay: (job: JobInfo) => boolean,
  enough: number,
): number {
  const memos = ssn.memos.lasting;
  let n = 0;
  for (const job of jobs) {
    const f = jobFreeable(memos, job);
    n += f.shared;
    if (f.whole > 0 && mayStay(job)) n += f.whole;
    if (n >= enough) return n;
  }
  return n;
}
