// Which of a job's pods an attempt places (KAI: podgroup_info/allocation_info.go): every
// pod set below its minimum contributes its missing pods; when all are satisfied, one
// pod from the first pod set (in pod-set order) that has a candidate.
import type { PodInfo } from "../api/pod-info.js";
import type { JobInfo, PodSet } from "../api/podgroup-info.js";
import type { Session } from "./session.js";

interface Cached {
  version: number;
  tasks: PodInfo[];
  /** Summed request of `tasks`, filled on first use (KAI caches it with the task list). */
  resources: { gpu: number; cpuMillis: number; memory: number } | null;
}
const cache = new WeakMap<JobInfo, Cached>();

/** Cached per job until one of its pods changes status (as KAI caches it, whatever `real`). */
export function tasksToAllocate(ssn: Session, job: JobInfo, real: boolean): PodInfo[] {
  const c = cache.get(job);
  if (c && c.version === job.version) return c.tasks;
  const tasks = computeTasks(ssn, job, real);
  cache.set(job, { version: job.version, tasks, resources: null });
  return tasks;
}

function computeTasks(ssn: Session, job: JobInfo, real: boolean): PodInfo[] {
  const sets = [...job.podSetList].sort((a, b) => ssn.podSetOrder(a, b));
  let unsatisfied = 0;
  for (const ps of sets) if (ps.activeAllocated < ps.minAvailable) unsatisfied++;
  const maxSets = unsatisfied > 0 ? unsatisfied : 1;
  const out: PodInfo[] = [];
  let used = 0;
  for (const ps of sets) {
    if (used >= maxSets) break;
    const candidates = ps.pods.filter((p) => p.shouldAllocate(real));
    if (candidates.length === 0) continue;
    candidates.sort((a, b) => ssn.taskOrder(a, b));
    out.push(...candidates.slice(0, numToAllocate(ps, candidates.length)));
    used++;
  }
  return out;
}

function numToAllocate(ps: PodSet, candidates: number): number {
  if (ps.activeAllocated >= ps.minAvailable) return Math.min(candidates, 1);
  return ps.minAvailable - ps.activeAllocated;
}

/**
 * Summed request of the attempt's tasks; a GPU-memory task counts memory/minNodeGpuMemory GPUs.
 * Cached with the task list: a job copy that statements never update (a solver's partial
 * job) keeps the request it had when first asked, as KAI's cache does.
 */
export function tasksToAllocateResources(
  ssn: Session,
  job: JobInfo,
  real: boolean,
): { gpu: number; cpuMillis: number; memory: number } {
  const tasks = tasksToAllocate(ssn, job, real);
  const c = cache.get(job)!;
  if (c.resources) return c.resources;
  const r = { gpu: 0, cpuMillis: 0, memory: 0 };
  const minMem = ssn.params.minNodeGpuMemory;
  for (const t of tasks) {
    if (!t.shouldAllocate(real)) continue;
    r.gpu += t.req.gpusQuota;
    if (t.req.kind === "memory" && minMem > 0) r.gpu += t.req.gpuDevices * (t.req.gpuMemory / minMem);
    r.cpuMillis += t.req.cpu;
    r.memory += t.req.memory;
  }
  c.resources = r;
  return r;
}
