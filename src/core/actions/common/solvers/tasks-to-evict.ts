// Which of a victim job's pods a scenario takes next (KAI: podgroup_info/eviction_info.go):
// when some pod set is above its minimum, one pod of the most satisfied pod set;
// otherwise every placed pod of every pod set. Pod sets and pods go in reverse order, so
// the pods the job would place last are taken first.
import type { PodInfo } from "../../../api/pod-info.js";
import type { JobInfo, PodSet } from "../../../api/podgroup-info.js";
import { isActiveAllocated } from "../../../api/status.js";
import type { TasksToEvict } from "../../../framework/memo.js";
import type { Session } from "../../../framework/session.js";

/**
 * Kept per job until one of its pods changes status (the victim queue of every prefix of an
 * attempt offers the same jobs again). Shared: do not modify.
 */
export function tasksToEvict(ssn: Session, job: JobInfo): TasksToEvict {
  // Per session: the orders are the session's plugins'.
  const jobs = ssn.memos.tasksToEvict;
  const c = jobs.get(job);
  const revision = ssn.memos.lasting.revision(job);
  if (c && c.revision === revision) return c.result;
  const result = computeTasksToEvict(ssn, job);
  jobs.set(job, { revision, result });
  return result;
}

function computeTasksToEvict(ssn: Session, job: JobInfo): TasksToEvict {
  const sets = [...job.podSetList].sort((a, b) => ssn.podSetOrder(b, a));
  const aboveMin = sets.some((ps) => ps.activeAllocated > ps.minAvailable);
  const maxSets = aboveMin ? 1 : sets.length;
  const tasks: PodInfo[] = [];
  for (let i = 0; i < sets.length && i < maxSets; i++) tasks.push(...fromPodSet(ssn, sets[i]!));
  return { tasks, hasMore: tasks.length < job.numActiveAllocated };
}

function fromPodSet(ssn: Session, ps: PodSet): PodInfo[] {
  const placed = ps.pods.filter((p) => isActiveAllocated(p.status));
  placed.sort((a, b) => ssn.taskOrder(b, a));
  const max = ps.activeAllocated > ps.minAvailable ? 1 : ps.activeAllocated;
  return placed.slice(0, max);
}
