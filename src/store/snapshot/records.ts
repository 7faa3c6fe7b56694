// The rows a cluster's snapshot is built from, as compact records: only the columns the
// snapshot and the committer need, numbers for times (ms since the epoch) and amounts.
import type { JobState, PodState, QuotaResource } from "../generated/prisma/enums.js";
import type { SubGroupRow, TopologyConstraint } from "../validation/submit-job.js";

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

export interface QuotaRecord {
  queueName: string;
  scope: string;
  resource: QuotaResource;
  deserved: number | null;
  limit: number | null;
  overQuotaWeight: number | null;
}

export interface JobRecord {
  id: string;
  name: string;
  namespace: string;
  queueName: string;
  clusterName: string | null;
  state: JobState;
  priority: number;
  preemptible: boolean;
  minMember: number;
  subGroups: SubGroupRow[];
  topology: TopologyConstraint | null;
  createdAt: number;
  lastStartAt: number | null;
  staleSince: number | null;
}

export interface TaskRecord {
  jobId: string;
  name: string;
  subGroup: string | null;
  nodeSelector: { key: string; values: string[] }[];
  gpuModel: string | null;
}

export interface PodRecord {
  id: string;
  jobId: string;
  taskName: string;
  name: string;
  state: PodState;
  nodeName: string | null;
  gpuGroups: string[];
  gpuDevices: number[];
  message: string | null;
  cpuMillis: number;
  memory: number;
  gpus: number;
  gpuFraction: number;
  gpuMemory: number;
  createdAt: number;
}
