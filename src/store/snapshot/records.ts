// The rows a cluster's snapshot is built from, as compact records: only the columns the
// snapshot and the committer need, numbers for times (ms since the epoch) and amounts.
import type { Job, JobHead, Pod } from "../types.js";
import type { PendingReason } from "../domain/pending-reason.js";
import type { QuotaRow } from "../domain/quotas.js";
import type { SubGroupRow, TopologyConstraint } from "../validation/submit-job.js";
import type { JobRow, PodRow } from "./rows.js";

export interface NodeRecord {
  name: string;
  labels: Record<string, string>;
  taints: unknown[];
  unschedulable: boolean;
  ready: boolean;
  cpuMillis: number;
  memory: number;
  gpus: number;
  gpuMemory: number;
  maxPods: number;
  gpuModel: string | null;
  gpuDevices: unknown[];
}

export interface QueueRecord {
  name: string;
  parentName: string | null;
  priority: number;
  createdAt: number;
}

/** A quota row as the snapshot reads it: every column but its time of change. */
export type QuotaRecord = QuotaRow;

/** A job as the snapshot reads it: its columns, JSON ones parsed and times as numbers. */
export interface JobRecord
  extends JobHead,
    Pick<Job, "namespace" | "priority" | "preemptible" | "minMember"> {
  subGroups: SubGroupRow[];
  topology: TopologyConstraint | null;
  createdAt: number;
  lastStartAt: number | null;
  staleSince: number | null;
  pendingReason: PendingReason | null;
  /** A restarted gang whose next attempt is held back (restart_after set): its pods wait, gated. */
  held: boolean;
}

/** The committer's view of a job (snapshot/rows.ts). */
export const jobRowOf = (j: JobRecord): JobRow => ({
  id: j.id,
  name: j.name,
  queueName: j.queueName,
  clusterName: j.clusterName,
  state: j.state,
  minMember: j.minMember,
  pendingReason: j.pendingReason,
  lastStartAt: j.lastStartAt === null ? null : new Date(j.lastStartAt),
  staleSince: j.staleSince === null ? null : new Date(j.staleSince),
  held: j.held,
});

export interface TaskRecord {
  jobId: string;
  name: string;
  subGroup: string | null;
  nodeSelector: { key: string; values: string[] }[];
  gpuModel: string | null;
}

/** The committer's columns of a pod (snapshot/rows.ts) and its request, memory and creation
 * time as numbers. */
export type PodRecord = PodRow &
  Pick<Pod, "taskName" | "cpuMillis" | "gpus" | "gpuFraction" | "gpuMemory"> & {
    memory: number;
    createdAt: number;
  };
