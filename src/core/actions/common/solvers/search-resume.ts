// Going on with a victim search that an earlier session's scenario budget stopped
// (framework/search-cursors). The cursor names the prefix being solved, the victims that
// solved the prefixes before it, and how many of its scenarios were already tried; the
// resumed search rebuilds those scenarios without simulating them and checks that the
// last one ends with the same victim job — if not, the cluster moved on and the search
// starts over.
import type { PodInfo } from "../../../api/pod-info.js";
import type { JobInfo } from "../../../api/podgroup-info.js";
import type { ActionName, SearchCursor } from "../../../api/result.js";
import { isActiveAllocated } from "../../../api/status.js";
import type { Session } from "../../../framework/session.js";
import type { VictimGroup, VictimScenario } from "./victim-scenario.js";

/** A prefix's scenarios could not be skipped as the cursor says. */
export const CURSOR_MISMATCH = Symbol("cursor mismatch");

export interface ResumePoint {
  prefix: number;
  recordedTasks: PodInfo[];
  recordedGroups: VictimGroup[];
  afterScenarios: number;
  lastVictim: string | null;
}

/** Scenarios of the prefix being solved that were tried in full. */
export class PrefixProgress {
  scenarios = 0;
  lastVictim: string | null = null;

  note(s: VictimScenario): void {
    this.scenarios++;
    this.lastVictim = s.latestPotentialVictim()?.uid ?? null;
  }
}

/**
 * Where the search for an attempt placing `tasks` pods goes on from, or null (start over)
 * when the cursor no longer fits: another number of pods, or a recorded victim that is no
 * longer placed or no longer a candidate.
 */
export function resumePoint(
  ssn: Session,
  cursor: SearchCursor,
  tasks: number,
  candidates: readonly JobInfo[],
): ResumePoint | null {
  if (cursor.tasks !== tasks || cursor.prefix > tasks) return null;
  const candidateUids = new Set(candidates.map((j) => j.uid));
  const recordedTasks: PodInfo[] = [];
  const byJob = new Map<string, PodInfo[]>();
  for (const v of cursor.recordedVictims) {
    const job = ssn.jobs.get(v.job);
    const pod = job?.pods.find((p) => p.uid === v.pod);
    if (!job || !pod || !candidateUids.has(job.uid) || !isActiveAllocated(pod.status)) return null;
    recordedTasks.push(pod);
    const group = byJob.get(job.uid);
    if (group) group.push(pod);
    else byJob.set(job.uid, [pod]);
  }
  return {
    prefix: cursor.prefix,
    recordedTasks,
    recordedGroups: [...byJob.values()],
    afterScenarios: cursor.afterScenarios,
    lastVictim: cursor.lastVictim,
  };
}

/** The cursor of a search stopped while solving `prefix`. */
export function cursorAt(
  ssn: Session,
  action: ActionName,
  job: JobInfo,
  tasks: number,
  prefix: number,
  recorded: readonly PodInfo[],
  progress: PrefixProgress,
): SearchCursor {
  return {
    action,
    job: job.uid,
    tasks,
    prefix,
    recordedVictims: recorded.map((p) => ({ job: p.jobUid, pod: p.uid })),
    afterScenarios: progress.scenarios,
    lastVictim: progress.lastVictim,
    leftAt: ssn.now,
  };
}
