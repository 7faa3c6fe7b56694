// The shapes of the API's answers the CLI reads (a subset of schema.graphql).
export type JobState = "PENDING" | "ADMITTED" | "RUNNING" | "SUCCEEDED" | "FAILED" | "CANCELLED";
export type PodState = "PENDING" | "PIPELINED" | "BINDING" | "RUNNING" | "RELEASING" | "SUCCEEDED" | "FAILED";
export type ResourceName = "GPU" | "CPU" | "MEMORY";

export interface Resources {
  cpu: number | null;
  /** bytes, as a decimal string */
  memory: string | null;
  gpu: number | null;
  gpuMemory: number | null;
}

export interface ClusterShortfall {
  cluster: string;
  message: string;
  short: { resource: ResourceName; amount: number }[];
}

export interface PendingReason {
  message: string;
  clusters: ClusterShortfall[];
}

export interface PodView {
  name: string;
  state: PodState;
  node: string | null;
  task: string;
  message: string | null;
  exitCode?: number | null;
}

/** A job as LIST_JOBS shows it (JOB_SUMMARY_FIELDS). */
export interface JobSummary {
  id: string;
  name: string;
  state: JobState;
  queue: { name: string };
  cluster: { name: string } | null;
  requestedCluster: string | null;
  priority: number;
  minMember: number;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  submittedBy: string;
  labels: { key: string; value: string }[];
  maxRuntimeSeconds: number | null;
  expectedRuntimeSeconds: number | null;
  /** Gang restarts so far, and the attempt running or to run (restarts + 1). */
  restarts: number;
  attempt: number;
  /** How many of its pods are in each state. */
  podStates: { state: PodState; count: number }[];
  pendingReason: PendingReason | null;
}

/** A job with its first pods (JOB_FIELDS). */
export interface JobView extends JobSummary {
  pods: PodView[];
  /** Submit only: what the spec replaces of fleetq's environment. */
  warnings?: string[];
}

export interface EventView {
  at: string;
  kind: string;
  message: string;
  actor: string | null;
}

export interface JobDetail extends JobView {
  events: EventView[];
  /** When and where a pending job is expected to start (null: not pending, or unknown). */
  estimatedStart?: string | null;
  estimatedCluster?: string | null;
}

export interface QueueQuota {
  cluster: string | null;
  resource: ResourceName;
  deserved: number | null;
  limit: number | null;
  overQuotaWeight: number | null;
}

export interface QueueView {
  name: string;
  priority: number;
  parent: { name: string } | null;
  quotas: QueueQuota[];
}

export interface ClusterView {
  name: string;
  state: string;
  cordoned: boolean;
  heartbeatAt: string | null;
  owner: { worker: string; since: string } | null;
  labels: { key: string; value: string }[];
  nodeCount: number;
  capacity: Resources;
  allocated: Resources;
}

export interface NodeView {
  name: string;
  gpuModel: string | null;
  unschedulable: boolean;
  ready: boolean;
  capacity: Resources;
  allocated: Resources;
}

export interface ClusterDetail extends ClusterView {
  nodes: NodeView[];
}

export interface QueueShare {
  queue: string;
  cluster: string | null;
  deserved: Resources;
  fairShare: Resources;
  allocated: Resources;
  requested: Resources;
  limit: Resources;
  usage: Resources | null;
}

export const TERMINAL_JOB_STATES: ReadonlySet<JobState> = new Set(["SUCCEEDED", "FAILED", "CANCELLED"]);

export interface WhatIfJobView {
  job: string;
  name: string;
  queue: string;
  pods: number;
  nodes: string[];
}

export interface WhatIfResult {
  cluster: string;
  starts: WhatIfJobView[];
  pipelined: WhatIfJobView[];
  evictions: {
    job: string;
    name: string;
    queue: string;
    pod: string;
    node: string;
    action: string;
    message: string;
  }[];
  queues: {
    queue: string;
    deservedBefore: Resources;
    deservedAfter: Resources;
    fairShareBefore: Resources;
    fairShareAfter: Resources;
    allocatedBefore: Resources;
    allocatedAfter: Resources;
  }[];
}

export interface UsageHours {
  gpuHours: number;
  cpuCoreHours: number;
  memoryGiBHours: number;
}

export interface UsageRow {
  queue: string | null;
  cluster: string | null;
  gpuModel: string | null;
  label: string | null;
  periodStart: string;
  periodEnd: string;
  allocated: UsageHours;
  used: UsageHours;
  cost: number | null;
}

/** A dryRunSubmit answer (schema.graphql's SubmitDryRun). */
export interface SubmitDryRunView {
  name: string;
  queue: string;
  cluster: string | null;
  named: boolean;
  tier: number | null;
  message: string;
  estimatedStart: string | null;
  estimatedCluster: string | null;
  clusters: {
    cluster: string;
    chosen: boolean;
    candidate: boolean;
    message: string;
    short: { resource: string; amount: number }[];
    estimatedStart: string | null;
    estimated: boolean;
  }[];
  evictions: {
    job: string;
    name: string;
    queue: string;
    cluster: string;
    pods: number;
    action: string;
    message: string;
    at: string;
    now: boolean;
  }[];
}
