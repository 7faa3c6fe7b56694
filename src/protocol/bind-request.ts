// The message a cluster's agent receives for each BindRequest row (the outbox).
// BullMQ forbids ':' in queue names, so the queue of cluster C is the BullMQ queue
// named C under the prefix "bind": its Redis keys are `bind:<C>:*`.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

export const BIND_QUEUE_PREFIX = "bind";

export function bindQueueName(cluster: string): string {
  return cluster;
}

/** bind and evict a pod; delete a workload's object (its job cancelled). */
export type BindRequestKind = "bind" | "evict" | "delete";

export interface BindRequestMessage {
  /** BindRequest row id: the idempotency key of the request (also the BullMQ job id). */
  id: string;
  kind: BindRequestKind;
  cluster: string;
  /** Fencing: the cluster generation the decision was made on. */
  generation: number;
  job: {
    id: string;
    name: string;
    namespace: string;
    queue: string;
    /** The job's pods were created by users in the cluster: they keep their own names. */
    createdInCluster: boolean;
    /** Gang restarts before the run this request starts (bind) or ends (evict): each attempt's
     * pods are named apart on Kubernetes, and their environment says which attempt they are. */
    restarts: number;
    /** The kind of the Kubernetes workload the job runs as (Job, JobSet, PyTorchJob, MPIJob): its
     * object's controller makes the pods; null = the agent creates them itself. */
    workload: string | null;
  };
  pod: {
    name: string;
    /** The pod's task: its template is fetched by reference (the agents' jobRenderSpec query),
     * so a message stays small whatever the template's size. */
    task: string;
    /** Pod requests, for the agent's own accounting (simulated backend). */
    resources: { cpuMillis: number; memory: number; gpus: number; gpuFraction: number; gpuMemory: number };
    /** Simulated clusters: how long the pod runs, and whether it ends Failed (exitFailure, or
     * this attempt is one of the task's exitFailureAttempts). */
    durationSeconds: number | null;
    exitFailure: boolean;
  };
  node: string;
  gpuGroups: string[];
  /** Device indices of the node the pod gets (whole-GPU pods on nodes that report their device
   * topology; [] = the node's device plugin chooses). Kubernetes: the `fleetq.io/gpu-devices`
   * annotation and NVIDIA_VISIBLE_DEVICES; simulated: refused if another pod holds one. */
  gpuDevices: number[];
  /** Human-readable reason (eviction: who it made room for). */
  reason: string;
  attempt: number;
}

// Authenticity: whoever can write to Redis could otherwise make an agent create any pod on any
// node. Every message is signed by the control plane (HMAC-SHA256 over its canonical JSON) with a
// key of its cluster, derived from the control plane's secret (FLEETQ_BIND_SECRET) and the
// cluster's name; the agent gets its cluster's key over the API with its AGENT token, and refuses
// a message whose signature does not match. One HMAC per message; no key is stored per cluster.

/** The job data on the queue: the message and its signature (hex). */
export type SignedBindRequest = BindRequestMessage & { signature: string };

/** The key of `cluster`'s messages (hex): the control plane signs with it, the agent checks. */
export function bindRequestKey(secret: string, cluster: string): string {
  return createHmac("sha256", secret).update(`fleetq bind-request key\0${cluster}`).digest("hex");
}

export function signBindRequest(message: BindRequestMessage, key: string): SignedBindRequest {
  return { ...message, signature: signatureOf(message, key) };
}

/** Whether `data` (a queue job's data) carries the signature `key` gives its other fields. */
export function bindRequestSignatureValid(data: unknown, key: string): boolean {
  if (data === null || typeof data !== "object") return false;
  const { signature, ...message } = data as Record<string, unknown>;
  if (typeof signature !== "string" || !/^[0-9a-f]{64}$/.test(signature)) return false;
  const expected = Buffer.from(signatureOf(message, key), "hex");
  return timingSafeEqual(expected, Buffer.from(signature, "hex"));
}

function signatureOf(message: object, key: string): string {
  return createHmac("sha256", Buffer.from(key, "hex")).update(canonicalJson(message)).digest("hex");
}

/** JSON with every object's keys sorted: the same bytes whatever order a producer wrote them in. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** A secret for a control plane running in one process (fleetq dev, tests): made at start. */
const PROCESS_BIND_SECRET = randomBytes(32).toString("hex");

/** The control plane's BindRequest secret: FLEETQ_BIND_SECRET, else this process's own (valid only
 * when the API and the workers run in this one process). */
export function defaultBindSecret(env: NodeJS.ProcessEnv = process.env): string {
  return env.FLEETQ_BIND_SECRET || PROCESS_BIND_SECRET;
}
