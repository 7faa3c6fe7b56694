// The result of one session: plain data that the rest of the system commits
// (binds and evictions become BindRequests; statuses and reasons go to the jobs).
import type { PodStatus, QuotaVector } from "./spec.js";

export type ActionName = "allocate" | "consolidation" | "reclaim" | "preempt" | "stalegangeviction";

export interface Placement {
  job: string;
  pod: string;
  node: string;
  /** Shared-GPU group ids the pod was placed on (fractional / GPU-memory pods). */
  gpuGroups: string[];
  /** Device indices chosen for a whole-GPU pod on a node that reports its devices (the core always sets it; empty otherwise). */
  gpuDevices?: number[];
  action: ActionName;
}

export interface Eviction {
  job: string;
  pod: string;
  node: string;
  action: ActionName;
  /** Why, in words (who it made room for). */
  message: string;
}

export interface JobOutcome {
  uid: string;
  /** Number of pods in each status at the end of the session (may be shared: do not modify). */
  podStatuses: Partial<Record<PodStatus, number>>;
  /** Why pods of this job could not be placed, produced by the code that tried to place them. */
  fitErrors: string[];
  /** Resources of the job's unplaced gang minimum that no node could offer, per resource (0 = not short). */
  shortfall: QuotaVector | null;
  lastStartAt: number | null;
  staleSince: number | null;
}

export interface QueueShare {
  queue: string;
  deserved: QuotaVector;
  fairShare: QuotaVector;
  allocated: QuotaVector;
  requested: QuotaVector;
  limit: QuotaVector;
}

export interface SessionResult {
  binds: Placement[];
  pipelines: Placement[];
  evictions: Eviction[];
  /** Every pod whose status the session changed, with its final status and node. */
  pods: { job: string; pod: string; status: PodStatus; node: string | null; gpuGroups: string[] }[];
  jobs: JobOutcome[];
  /** Fair shares as the proportion plugin computed them at session open (empty without it). */
  queues: QueueShare[];
  /** Victim searches the scenario budget stopped: give them to the next session (Snapshot.searchCursors). */
  searchCursors: SearchCursor[];
  /**
   * Present when the session stopped at its placement limit (RunOptions.maxPlacements): the
   * uids of the queued jobs allocate did not get to (their outcomes say nothing of why they
   * wait). A session right after may place more.
   */
  stoppedAtLimit?: { unreached: string[] };
}

/**
 * Where one job's victim search in a disruptive action stopped on its scenario budget
 * (maxScenariosPerJob / maxScenariosPerAction). Handed to the next session, the search goes
 * on from there instead of starting over, so a job whose search is long is not starved by
 * the budget. Only a hint: a cursor that no longer fits the cluster is dropped.
 */
export interface SearchCursor {
  action: ActionName;
  /** The job's uid. */
  job: string;
  /** How many pods the attempt places (a cursor is only resumed for the same number). */
  tasks: number;
  /** The prefix (number of pods, 1..tasks) being solved when the search stopped. */
  prefix: number;
  /** The victim pods (job and pod uids) that solved the prefixes before it. */
  recordedVictims: { job: string; pod: string }[];
  /** Scenarios of that prefix already tried without success. */
  afterScenarios: number;
  /** The victim job newest in the last of them (null: none, or the recorded victims alone). */
  lastVictim: string | null;
  /**
   * The session time (snapshot `now`, ms) the search stopped. A cursor no session takes for
   * `searchCursorIdleSeconds` after it is dropped: the search it holds was made in a cluster
   * that has moved on, and starts over when the job is next attempted.
   */
  leftAt: number;
}
