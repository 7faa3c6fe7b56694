// Which of a job's pods an attempt places (KAI: podgroup_info/allocation_info.go): every
// pod set below its minimum contributes its missing pods; when all are satisfied, one
// pod from the first pod set (in pod-set order) that has a candidate.
import type { PodInfo } from "../api/pod-info.js";
import type { JobInfo, PodSet } from "../api/podgroup-info.js";
import type { AttemptTasks } from "./memo.js";
import type { Session } from "./session.js";

/** Summed request of an attempt's tasks (cpu in millicores, memory in bytes, GPUs). */
export interface AttemptResources {
  cpu: number;
  memory: number;
  gpu: number;
}

/** Cached per job until one of its pods changes status (as KAI caches it, whatever `real`). */
export function tasksToAllocate(ssn: Session, job: JobInfo, real: boolean): PodInfo[] {
  return cachedFor(ssn, job, real).tasks;
}

/**
 * The job's cache entry, recomputed when its revision moved (updated in place). Per session (orders
 * are the session's plugins'), per job object (a copy of a job has its own).
 */
function cachedFor(ssn: Session, job: JobInfo, real: boolean): AttemptTasks {
  const jobs = ssn.memos.tasksToAllocate;
  const c = jobs.get(job);
  const revision = ssn.memos.lasting.revision(job);
  if (c && c.revision === revision) return c;
  const tasks = computeTasks(ssn, job, real);
  if (!c) {
    const fresh: AttemptTasks = { revision, tasks, resources: null };
    jobs.set(job, fresh);
    return fresh;
  }
  c.revision = revision;
  c.tasks = tasks;
  c.resources = null;
  return c;
}

function computeTasks(ssn: Session, job: JobInfo, real: boolean): PodInfo[] {
  // A single pod set needs no sorted copy (sorting one item never consults the order).
  const sets =
    job.podSetList.length > 1 ? [...job.podSetList].sort((a, b) => ssn.podSetOrder(a, b)) : job.podSetList;
  let unsatisfied = 0;
  for (const ps of sets) if (ps.activeAllocated < ps.minAvailable) unsatisfied++;
  const maxSets = unsatisfied > 0 ? unsatisfied : 1;
  // Called once per job and status change (32,000 times for as many one-pod jobs): plain
  // loops, and the first pod set's candidates become the result when all of them are taken.
  let out: PodInfo[] | null = null;
  let used = 0;
  for (const ps of sets) {
    if (used >= maxSets) break;
    const candidates: PodInfo[] = [];
    for (const p of ps.pods) if (p.shouldAllocate(real)) candidates.push(p);
    if (candidates.length === 0) continue;
    if (candidates.length > 1) candidates.sort((a, b) => ssn.taskOrder(a, b));
    const take = Math.min(numToAllocate(ps, candidates.length), candidates.length);
    if (out === null && take === candidates.length) out = candidates;
    else {
      out ??= [];
      for (let i = 0; i < take; i++) out.push(candidates[i]!);
    }
    used++;
  }
  return out ?? [];
}

function numToAllocate(ps: PodSet, candidates: number): number {
  if (ps.activeAllocated >= ps.minAvailable) return Math.min(candidates, 1);
  return ps.minAvailable - ps.activeAllocated;
}

/**
 * Summed request of the attempt's tasks; a GPU-memory task counts memory/minNodeGpuMemory GPUs.
 * Cached with the task list: a job copy that statements never update (a solver's partial
 * job) keeps the request it had when first asked, as KAI's cache does. Shared: do not modify.
 */
export function tasksToAllocateResources(ssn: Session, job: JobInfo, real: boolean): AttemptResources {
  const c = cachedFor(ssn, job, real);
  if (c.resources) return c.resources;
  const r: AttemptResources = { cpu: 0, memory: 0, gpu: 0 };
  const minMem = ssn.params.minNodeGpuMemory;
  for (const t of c.tasks) {
    if (!t.shouldAllocate(real)) continue;
    r.gpu += t.req.gpusQuota;
    if (t.req.kind === "memory" && minMem > 0) r.gpu += t.req.gpuDevices * (t.req.gpuMemory / minMem);
    r.cpu += t.req.cpu;
    r.memory += t.req.memory;
  }
  c.resources = r;
  return r;
}
