// The rows and states the store hands out, as plain TypeScript types: what the API, the metrics,
// the workers and the CLI see of the database. They match the schema (prisma/schema.prisma) field
// for field — types-match.ts fails the build when one drifts from the generated client (a new
// column is added here too) — but nothing outside the store depends on the generated client.

import type { PodSecurityLevel } from "./validation/pod-security/index.js";

/** A JSON column's value. */
export type JsonValue = string | number | boolean | null | JsonArray | JsonObject;
export type JsonArray = JsonValue[];
export type JsonObject = { [key in string]?: JsonValue };

export type ClusterState = "REGISTERED" | "READY" | "LOST";
export type JobState = "PENDING" | "ADMITTED" | "RUNNING" | "SUCCEEDED" | "FAILED" | "CANCELLED";
export type PodState = "PENDING" | "PIPELINED" | "BINDING" | "RUNNING" | "RELEASING" | "SUCCEEDED" | "FAILED";
export type QuotaResource = "GPU" | "CPU" | "MEMORY";
export type Role = "ADMIN" | "MEMBER" | "VIEWER" | "AGENT";
export type BindRequestKind = "BIND" | "EVICT" | "DELETE";
export type BindRequestState = "PENDING" | "DISPATCHED" | "SUCCEEDED" | "FAILED";

export interface Cluster {
  name: string;
  labels: JsonValue;
  state: ClusterState;
  cordoned: boolean;
  heartbeatAt: Date | null;
  generation: bigint;
  createdAt: Date;
  podPolicy: JsonValue | null;
}

export interface Node {
  clusterName: string;
  name: string;
  labels: JsonValue;
  taints: JsonValue;
  unschedulable: boolean;
  ready: boolean;
  cpuMillis: number;
  memory: bigint;
  gpus: number;
  gpuMemory: number;
  maxPods: number;
  gpuModel: string | null;
  gpuDevices: JsonValue;
  updatedAt: Date;
}

export interface Queue {
  name: string;
  parentName: string | null;
  priority: number;
  createdAt: Date;
  namespaces: string[];
  podSecurity: PodSecurityLevel | null;
  defaultRequest: JsonValue | null;
  podPolicy: JsonValue | null;
}

export interface QueueQuota {
  queueName: string;
  scope: string;
  resource: QuotaResource;
  deserved: number | null;
  limit: number | null;
  overQuotaWeight: number | null;
  updatedAt: Date;
}

export interface Job {
  id: string;
  name: string;
  namespace: string;
  queueName: string;
  requestedCluster: string | null;
  clusterName: string | null;
  clusterSelector: JsonValue;
  priority: number;
  preemptible: boolean;
  minMember: number;
  subGroups: JsonValue;
  topology: JsonValue | null;
  state: JobState;
  pendingReason: JsonValue | null;
  idempotencyKey: string | null;
  specHash: string;
  submittedBy: string;
  createdAt: Date;
  updatedAt: Date;
  admittedAt: Date | null;
  startedAt: Date | null;
  finishedAt: Date | null;
  lastStartAt: Date | null;
  staleSince: Date | null;
  createdInCluster: boolean;
  labels: JsonValue;
  maxRuntimeSeconds: number | null;
  expectedRuntimeSeconds: number | null;
  restartPolicy: JsonValue | null;
  rendezvousPort: number | null;
  workload: JsonValue | null;
  restarts: number;
  restartAfter: Date | null;
}

/** Which job, of which queue, on which cluster, in which state: what most of the store's reads
 * of a job start from (each declares only what it adds). */
export type JobHead = Pick<Job, "id" | "name" | "queueName" | "clusterName" | "state">;

export interface JobTask {
  jobId: string;
  name: string;
  replicas: number;
  cpuMillis: number;
  memory: bigint;
  gpus: number;
  gpuFraction: number;
  gpuMemory: number;
  subGroup: string | null;
  nodeSelector: JsonValue;
  gpuModel: string | null;
  template: JsonValue | null;
  durationSeconds: number | null;
  exitFailure: boolean;
  exitFailureAttempts: number;
  position: number;
  extendedResources: JsonValue;
}

export interface Pod {
  id: string;
  jobId: string;
  taskName: string;
  name: string;
  state: PodState;
  nodeName: string | null;
  gpuGroups: string[];
  gpuDevices: number[];
  clusterUid: string | null;
  message: string | null;
  exitCode: number | null;
  cpuMillis: number;
  memory: bigint;
  gpus: number;
  gpuFraction: number;
  gpuMemory: number;
  createdAt: Date;
  updatedAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}

export interface BindRequest {
  id: string;
  kind: BindRequestKind;
  clusterName: string;
  jobId: string;
  podId: string;
  nodeName: string;
  gpuGroups: string[];
  gpuDevices: number[];
  reason: string;
  state: BindRequestState;
  attempts: number;
  lastError: string | null;
  generation: bigint;
  restarts: number;
  createdAt: Date;
  dispatchedAt: Date | null;
  completedAt: Date | null;
}

/** A BindRequest as the API lists it: with its pod's name. */
export type BindRequestWithPod = BindRequest & { pod: { name: string } };

export interface ApiToken {
  id: string;
  name: string;
  role: Role;
  secretHash: string;
  queues: string[];
  clusterName: string | null;
  createdBy: string | null;
  createdAt: Date;
  revokedAt: Date | null;
  subject: string | null;
}

export interface RoleBinding {
  id: string;
  subject: string | null;
  group: string | null;
  role: Role;
  queues: string[];
  clusterName: string | null;
  createdBy: string | null;
  createdAt: Date;
  revokedAt: Date | null;
}

export type WebhookDeliveryState = "PENDING" | "SUCCEEDED" | "FAILED";

export interface Webhook {
  id: string;
  url: string;
  events: string[];
  queues: string[];
  labels: JsonValue;
  secret: string;
  allowPrivateTargets: boolean;
  enabled: boolean;
  disabledReason: string | null;
  disabledAt: Date | null;
  consecutiveFailures: number;
  createdBy: string | null;
  createdAt: Date;
}

export interface WebhookDelivery {
  id: string;
  webhookId: string;
  eventId: bigint;
  event: string;
  jobId: string | null;
  payload: JsonValue;
  state: WebhookDeliveryState;
  attempts: number;
  responseCode: number | null;
  error: string | null;
  createdAt: Date;
  lastAttemptAt: Date | null;
  finishedAt: Date | null;
}
