// Which of two sibling queues is served first (KAI: plugins/proportion/queue_order), each
// represented by its best pending job (or, for victim queues, the jobs taken from it).
// Called for every pick of the next job, so it works on plain numbers, allocation-free.
import type { JobInfo } from "../../api/podgroup-info.js";
import { type Quantities, type QueueShare, type ResourceShare, UNLIMITED } from "./queue-share.js";

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

// Each criterion spells out cpu, memory and gpu in that order (the fields read directly,
// as a loop over resource names costs a keyed lookup per access on this hot path).

/** Fair share strictly below allocated in every resource. */
function overUtilized(q: QueueShare): boolean {
  const { cpu, memory, gpu } = q.shares;
  return (
    cpu.fairShare < cpu.allocated && memory.fairShare < memory.allocated && gpu.fairShare < gpu.allocated
  );
}

function underUtilizedFirst(l: QueueShare, r: QueueShare): number {
  const lo = overUtilized(l);
  const ro = overUtilized(r);
  return !lo && ro ? -1 : lo && !ro ? 1 : 0;
}

/** With the request added, still within deserved in every resource. */
function starved(q: QueueShare, req: Quantities): boolean {
  const { cpu, memory, gpu } = q.shares;
  return (
    le(cpu.allocated + req.cpu, cpu.deserved) &&
    le(memory.allocated + req.memory, memory.deserved) &&
    le(gpu.allocated + req.gpu, gpu.deserved)
  );
}

function starvedFirst(l: QueueShare, r: QueueShare, lReq: Quantities, rReq: Quantities): number {
  const ls = starved(l, lReq);
  const rs = starved(r, rReq);
  return ls && !rs ? -1 : rs && !ls ? 1 : 0;
}

function higherPriorityFirst(l: QueueShare, r: QueueShare): number {
  return compareNumbers(r.queue.priority, l.queue.priority);
}

/** Something of a resource the queue has no allocatable share of would be in use. */
const usesZero = (s: ResourceShare, requested: number) =>
  s.allocatable() === 0 && s.allocated + requested > 0;

function usesZeroShare(q: QueueShare, req: Quantities): boolean {
  const { cpu, memory, gpu } = q.shares;
  return usesZero(cpu, req.cpu) || usesZero(memory, req.memory) || usesZero(gpu, req.gpu);
}

function zeroSharePenalized(l: QueueShare, r: QueueShare, lReq: Quantities, rReq: Quantities): number {
  const lv = usesZeroShare(l, lReq);
  const rv = usesZeroShare(r, rReq);
  return lv && !rv ? 1 : !lv && rv ? -1 : 0;
}

/** The larger of a running maximum and a value (a NaN value leaves the maximum as it is). */
const larger = (max: number, value: number) => (value > max ? value : max);

/** Dominant share with the job's request added and the victims' allocation removed. */
function shareWith(q: QueueShare, req: Quantities, victims: JobInfo[] | null, total: Quantities): number {
  const { cpu, memory, gpu } = q.shares;
  let cpuAllocated = cpu.allocated + req.cpu;
  let memoryAllocated = memory.allocated + req.memory;
  let gpuAllocated = gpu.allocated + req.gpu;
  if (victims)
    for (const v of victims) {
      cpuAllocated -= v.allocatedCpu;
      memoryAllocated -= v.allocatedMemory;
      gpuAllocated -= v.allocatedGpus;
    }
  const d = larger(0, cpu.shareOf(cpuAllocated, total.cpu));
  return larger(
    larger(d, memory.shareOf(memoryAllocated, total.memory)),
    gpu.shareOf(gpuAllocated, total.gpu),
  );
}

/** Allocatable a ≤ b everywhere (unlimited-aware). */
function allocatableLe(a: QueueShare, b: QueueShare): boolean {
  const x = a.shares;
  const y = b.shares;
  return (
    le(x.cpu.allocatable(), y.cpu.allocatable()) &&
    le(x.memory.allocatable(), y.memory.allocatable()) &&
    le(x.gpu.allocatable(), y.gpu.allocatable())
  );
}

function smallerAllocatableFirst(l: QueueShare, r: QueueShare): number {
  const lr = allocatableLe(l, r);
  const rl = allocatableLe(r, l);
  if (lr && !rl) return -1;
  if (rl && !lr) return 1;
  return 0;
}
