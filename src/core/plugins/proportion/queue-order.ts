// Which of two sibling queues is served first (KAI: plugins/proportion/queue_order), each
// represented by its best pending job (or, for victim queues, the jobs taken from it).
// Called for every pick of the next job, so it works on plain numbers, allocation-free.
import type { JobInfo } from "../../api/podgroup-info.js";
import { type Quantities, type QueueShare, RESOURCES, UNLIMITED } from "./queue-share.js";

/** a ≤ b with -1 as unlimited on either side. */
function le(a: number, b: number): boolean {
  if (a === UNLIMITED) return b === UNLIMITED;
  return b === UNLIMITED || a <= b;
}

/**
 * Negative when queue `l` is served first. `lReq`/`rReq`: the resources of each side's best
 * job's next attempt (zeros for none); the victims: jobs taken from each side so far (victim
 * queues only); `total`: the cluster's capacity, for unlimited shares.
 */
export function compareQueues(
  l: QueueShare,
  r: QueueShare,
  lReq: Quantities,
  rReq: Quantities,
  lVictims: JobInfo[] | null,
  rVictims: JobInfo[] | null,
  total: Quantities,
): number {
  return (
    underUtilizedFirst(l, r) ||
    starvedFirst(l, r, lReq, rReq) ||
    higherPriorityFirst(l, r) ||
    zeroSharePenalized(l, r, lReq, rReq) ||
    compareNumbers(shareWith(l, lReq, lVictims, total), shareWith(r, rReq, rVictims, total)) ||
    compareNumbers(l.dominantShare(total), r.dominantShare(total)) ||
    smallerAllocatableFirst(l, r) ||
    (l.queue.createdAt < r.queue.createdAt ? -1 : 1)
  );
}

const compareNumbers = (a: number, b: number) => (a < b ? -1 : a > b ? 1 : 0);

/** Fair share strictly below allocated in every resource. */
function overUtilized(q: QueueShare): boolean {
  for (const r of RESOURCES) if (!(q.shares[r].fairShare < q.shares[r].allocated)) return false;
  return true;
}

function underUtilizedFirst(l: QueueShare, r: QueueShare): number {
  const lo = overUtilized(l);
  const ro = overUtilized(r);
  return !lo && ro ? -1 : lo && !ro ? 1 : 0;
}

function starved(q: QueueShare, req: Quantities): boolean {
  for (const r of RESOURCES) if (!le(q.shares[r].allocated + req[r], q.shares[r].deserved)) return false;
  return true;
}

function starvedFirst(l: QueueShare, r: QueueShare, lReq: Quantities, rReq: Quantities): number {
  const ls = starved(l, lReq);
  const rs = starved(r, rReq);
  return ls && !rs ? -1 : rs && !ls ? 1 : 0;
}

function higherPriorityFirst(l: QueueShare, r: QueueShare): number {
  return compareNumbers(r.queue.priority, l.queue.priority);
}

function usesZeroShare(q: QueueShare, req: Quantities): boolean {
  for (const r of RESOURCES) {
    const s = q.shares[r];
    if (s.allocatable() === 0 && s.allocated + req[r] > 0) return true;
  }
  return false;
}

function zeroSharePenalized(l: QueueShare, r: QueueShare, lReq: Quantities, rReq: Quantities): number {
  const lv = usesZeroShare(l, lReq);
  const rv = usesZeroShare(r, rReq);
  return lv && !rv ? 1 : !lv && rv ? -1 : 0;
}

/** Dominant share with the job's request added and the victims' allocation removed. */
function shareWith(q: QueueShare, req: Quantities, victims: JobInfo[] | null, total: Quantities): number {
  let d = 0;
  for (const r of RESOURCES) {
    const s = q.shares[r];
    let allocated = s.allocated + req[r];
    if (victims)
      for (const v of victims)
        allocated -= r === "gpu" ? v.allocatedGpus : r === "cpu" ? v.allocatedCpu : v.allocatedMemory;
    let a = s.allocatable();
    if (a === UNLIMITED) a = total[r];
    const value = a === 0 ? allocated * 1000 : allocated / a;
    if (value > d) d = value;
  }
  return d;
}

/** Allocatable a ≤ b everywhere (unlimited-aware). */
function allocatableLe(a: QueueShare, b: QueueShare): boolean {
  for (const r of RESOURCES) if (!le(a.shares[r].allocatable(), b.shares[r].allocatable())) return false;
  return true;
}

function smallerAllocatableFirst(l: QueueShare, r: QueueShare): number {
  const lr = allocatableLe(l, r);
  const rl = allocatableLe(r, l);
  if (lr && !rl) return -1;
  if (rl && !lr) return 1;
  return 0;
}
