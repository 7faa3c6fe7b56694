// Which of two sibling queues is served first (KAI: plugins/proportion/queue_order), each
// represented by its best pending job (or, for victim queues, the jobs taken from it).
import type { JobInfo } from "../../api/podgroup-info.js";
import { type Quantities, type QueueShare, RESOURCES, lessEqual, lessEverywhere, zero } from "./queue-share.js";

export interface QueueOrderInput {
  l: QueueShare;
  r: QueueShare;
  lJob: JobInfo | null;
  rJob: JobInfo | null;
  lVictims: JobInfo[] | null;
  rVictims: JobInfo[] | null;
  total: Quantities;
  /** The resources of a job's next attempt (its gang minimum), 0 for null. */
  jobRequest: (job: JobInfo | null) => Quantities;
}

const add = (a: Quantities, b: Quantities): Quantities => ({ cpu: a.cpu + b.cpu, memory: a.memory + b.memory, gpu: a.gpu + b.gpu });

export function compareQueues(i: QueueOrderInput): number {
  return (
    underUtilizedFirst(i.l, i.r) ||
    starvedFirst(i) ||
    higherPriorityFirst(i.l, i.r) ||
    zeroSharePenalized(i) ||
    smallerShareWithJob(i) ||
    smallerShare(i.l, i.r, i.total) ||
    smallerAllocatableFirst(i.l, i.r) ||
    (i.l.queue.createdAt < i.r.queue.createdAt ? -1 : 1)
  );
}

function underUtilizedFirst(l: QueueShare, r: QueueShare): number {
  const lo = lessEverywhere(l.fairShare(), l.allocated());
  const ro = lessEverywhere(r.fairShare(), r.allocated());
  return !lo && ro ? -1 : lo && !ro ? 1 : 0;
}

function starvedFirst(i: QueueOrderInput): number {
  const ls = lessEqual(add(i.l.allocated(), i.jobRequest(i.lJob)), i.l.deserved());
  const rs = lessEqual(add(i.r.allocated(), i.jobRequest(i.rJob)), i.r.deserved());
  return ls && !rs ? -1 : rs && !ls ? 1 : 0;
}

function higherPriorityFirst(l: QueueShare, r: QueueShare): number {
  const lp = l.queue.priority;
  const rp = r.queue.priority;
  return lp > rp ? -1 : lp < rp ? 1 : 0;
}

function usesZeroShare(q: QueueShare, job: JobInfo | null, jobRequest: QueueOrderInput["jobRequest"]): boolean {
  const alloc = add(q.allocated(), jobRequest(job));
  const allocatable = q.allocatable();
  return RESOURCES.some((r) => allocatable[r] === 0 && alloc[r] > 0);
}

function zeroSharePenalized(i: QueueOrderInput): number {
  const lv = usesZeroShare(i.l, i.lJob, i.jobRequest);
  const rv = usesZeroShare(i.r, i.rJob, i.jobRequest);
  return lv && !rv ? 1 : !lv && rv ? -1 : 0;
}

/** Dominant share with the job's request added and the victims' allocation removed. */
function shareWith(q: QueueShare, job: JobInfo | null, victims: JobInfo[] | null, i: QueueOrderInput): number {
  const req = i.jobRequest(job);
  const saved = q.allocated();
  const off = zero();
  for (const v of victims ?? []) {
    off.cpu += v.allocatedCpu;
    off.memory += v.allocatedMemory;
    off.gpu += v.allocatedGpus;
  }
  for (const r of RESOURCES) q.shares[r].allocated += req[r] - off[r];
  const share = q.dominantShare(i.total);
  for (const r of RESOURCES) q.shares[r].allocated = saved[r];
  return share;
}

function smallerShareWithJob(i: QueueOrderInput): number {
  const ls = shareWith(i.l, i.lJob, i.lVictims, i);
  const rs = shareWith(i.r, i.rJob, i.rVictims, i);
  return ls < rs ? -1 : ls > rs ? 1 : 0;
}

function smallerShare(l: QueueShare, r: QueueShare, total: Quantities): number {
  const ls = l.dominantShare(total);
  const rs = r.dominantShare(total);
  return ls < rs ? -1 : ls > rs ? 1 : 0;
}

function smallerAllocatableFirst(l: QueueShare, r: QueueShare): number {
  const la = l.allocatable();
  const ra = r.allocatable();
  if (!lessEqual(ra, la) && lessEqual(la, ra)) return -1;
  if (!lessEqual(la, ra) && lessEqual(ra, la)) return 1;
  return 0;
}
