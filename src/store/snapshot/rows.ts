// The rows a snapshot was built from, kept beside it so the commit can plan from them without
// reading the cluster again. A generation match at commit time means they are still current for
// every pod of the cluster (each change of pod state on a cluster bumps its generation).
import type { Job, JobHead, Pod } from "../types.js";
import type { PendingReason } from "../domain/pending-reason.js";

export type PodRow = Pick<
  Pod,
  "id" | "jobId" | "name" | "state" | "nodeName" | "gpuGroups" | "gpuDevices" | "message"
>;

/** The committer's columns of a job: with the pods' states, the gang minimum (`minMember`)
 * gives the job's state (domain/job-state). */
export interface JobRow extends JobHead, Pick<Job, "minMember" | "lastStartAt" | "staleSince"> {
  pendingReason: PendingReason | null;
  /** A restarted gang held back: its pending reason is the restart's, not a session's. */
  held?: boolean;
  /** A workload's job: its object's status ends it, not its pods (domain/job-state). */
  workload?: boolean;
}

/** Every job in the snapshot and all its pods, by id. */
export interface SnapshotRows {
  pods: ReadonlyMap<string, PodRow>;
  jobs: ReadonlyMap<string, JobRow>;
  /** The pods of `pods` that are PIPELINED (a nomination lives one session: the commit ends
   * those the session did not pipeline again, without a walk over every pod). */
  pipelined: ReadonlySet<string>;
}

export function podRow(p: Pod): PodRow {
  return {
    id: p.id,
    jobId: p.jobId,
    name: p.name,
    state: p.state,
    nodeName: p.nodeName,
    gpuGroups: p.gpuGroups,
    gpuDevices: p.gpuDevices,
    message: p.message,
  };
}

export function jobRow(j: Job): JobRow {
  return {
    id: j.id,
    name: j.name,
    queueName: j.queueName,
    clusterName: j.clusterName,
    state: j.state,
    minMember: j.minMember,
    pendingReason: (j.pendingReason ?? null) as PendingReason | null,
    lastStartAt: j.lastStartAt,
    staleSince: j.staleSince,
  };
}
