// The message a cluster's agent receives for each BindRequest row (the outbox).
// BullMQ forbids ':' in queue names, so the queue of cluster C is the BullMQ queue
// named C under the prefix "bind": its Redis keys are `bind:<C>:*`.

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
