// Job copies the solvers work with (KAI: PodGroupInfo.CloneWithTasks). A copy holds some
// of a job's pods with counters frozen at copy time: statements move the real job's
// counters, never a copy's, so a copy keeps ordering and sizing itself as it was when
// made — the partial preemptor stays "below its minimum", a victim remainder keeps the
// allocation it had when it was split off.
import type { PodInfo } from "../../../api/pod-info.js";
import { JobInfo } from "../../../api/podgroup-info.js";

/** A copy of `job` holding only `pods` (the same pod objects). */
export function copyJobWithPods(job: JobInfo, pods: readonly PodInfo[]): JobInfo {
  const copy = new JobInfo(job.spec);
  copy.lastStartAt = job.lastStartAt;
  copy.staleSince = job.staleSince;
  for (const p of pods) copy.addPod(p);
  return copy;
}

/**
 * The preemptor as one incremental step sees it: only the first tasks of its attempt,
 * each pod set requiring exactly the tasks of it in the prefix (KAI:
 * getPartialJobRepresentative).
 */
export function partialJob(job: JobInfo, prefix: readonly PodInfo[]): JobInfo {
  const copy = copyJobWithPods(job, prefix);
  const counts = new Map<string, number>();
  for (const t of prefix) counts.set(t.subGroup, (counts.get(t.subGroup) ?? 0) + 1);
  for (const [name, n] of counts) {
    const ps = copy.podSet(name);
    if (ps) ps.minAvailable = n;
  }
  return copy;
}
