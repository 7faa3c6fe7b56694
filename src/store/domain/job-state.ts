// A job's state follows from its pods' states (and its gang minimum). One rule, used by every
// operation that changes pods, so the job state can never disagree with its pods.
import type { JobState, PodState } from "../types.js";
import { RESOURCE_HOLDING_POD_STATES } from "./pod-states.js";

export type PodStateCounts = Partial<Record<PodState, number>>;

const TERMINAL_JOB_STATES: readonly JobState[] = ["SUCCEEDED", "FAILED", "CANCELLED"];

export const isFinished = (s: JobState): boolean => TERMINAL_JOB_STATES.includes(s);

/** Job states whose pods the scheduler still works on. */
export const UNFINISHED_JOB_STATES: JobState[] = ["PENDING", "ADMITTED", "RUNNING"];

export { RESOURCE_HOLDING_POD_STATES } from "./pod-states.js";

/**
 *  PENDING   fewer than minMember pods placed (BINDING/RUNNING/SUCCEEDED)
 *  ADMITTED  the gang is placed, fewer than minMember pods running yet
 *  RUNNING   at least minMember pods running (or done)
 *  SUCCEEDED no pod active any more, none failed, at least minMember succeeded
 *  FAILED    no pod active any more and some pod failed
 *  CANCELLED (set by cancelJob) and the terminal states never change again
 * A workload's job (a Job, JobSet, … its controller makes the pods of) ends when its object says
 * so (reportWorkloadStatus), not when its pods do: the controller may make pods again.
 */
export function deriveJobState(
  current: JobState,
  minMember: number,
  pods: PodStateCounts,
  workload = false,
): JobState {
  if (isFinished(current)) return current;
  const n = (s: PodState) => pods[s] ?? 0;
  let active = 0;
  for (const s of RESOURCE_HOLDING_POD_STATES) active += n(s);
  if (workload && active === 0 && n("FAILED") + n("SUCCEEDED") > 0) return current;
  if (active === 0 && n("FAILED") > 0) return "FAILED";
  if (active === 0 && n("SUCCEEDED") > 0 && n("SUCCEEDED") >= minMember) return "SUCCEEDED";
  if (n("RUNNING") + n("SUCCEEDED") >= minMember && n("RUNNING") > 0) return "RUNNING";
  if (n("BINDING") + n("RUNNING") + n("SUCCEEDED") >= minMember) return "ADMITTED";
  return "PENDING";
}
