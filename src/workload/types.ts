// Kubernetes workloads as users write them (a batch/v1 Job, a JobSet, a PyTorchJob, an MPIJob):
// what fleetq schedules of each — its pod sets as tasks — what it creates on the chosen cluster,
// how the pods its controller makes map back to the tasks, and how its status ends the job.

type Json = Record<string, unknown>;

export type WorkloadKindName = "Job" | "JobSet" | "PyTorchJob" | "MPIJob";

/** A refusal of a manifest, naming the field (`spec.pytorchReplicaSpecs.Worker.replicas`). */
export class WorkloadError extends Error {
  override name = "WorkloadError";
  constructor(
    readonly path: readonly PropertyKey[],
    message: string,
  ) {
    super(message);
  }
}

/** The request a container without one gets (a queue's, as a LimitRange would give it). */
export interface DefaultRequest {
  cpuMillis: number;
  /** Bytes. */
  memory: number;
}

/** One pod set of a workload: identical pods fleetq places as part of the job's gang. */
export interface WorkloadTask {
  /** The task's name in fleetq ("worker", "workers-0", "job"): its pods are "<name>-<i>". */
  name: string;
  replicas: number;
  /** The pod's effective request, as Kubernetes computes it (defaults written in). */
  resources: { cpuMillis: number; memory: number; gpus: number };
  /** The pod template as it will be created (the defaults written in), a Pod with metadata and spec. */
  template: Json;
  /** Where the template is in the manifest (errors about it name this path). */
  templatePath: readonly PropertyKey[];
  /** The template's nodeSelector, as key In [value] matches. */
  nodeSelector: { key: string; values: string[] }[];
  /** From a nvidia.com/gpu.product node selector. */
  gpuModel: string | null;
}

/** A manifest accepted, as fleetq schedules and creates it. */
export interface Workload {
  kind: WorkloadKindName;
  apiVersion: string;
  /** metadata.name (generateName resolved). */
  name: string;
  /** metadata.namespace, or null when the manifest names none. */
  namespace: string | null;
  /** The object with the defaults written in (what the agent creates, with fleetq's marks added). */
  manifest: Json;
  tasks: WorkloadTask[];
  /** The gang minimum: every pod, or the manifest's own minimum. */
  minMember: number;
  /** The queue its labels name (fleetq.io/queue, else kueue.x-k8s.io/queue-name), if any. */
  queue: string | null;
  /** Its annotation fleetq.io/simulated-duration-seconds: how long its pods run on a simulated
   * cluster (null: the cluster's default). */
  simulatedDurationSeconds: number | null;
}

/** Where a pod a controller made stands in its workload: its task and index (null: a Job's
 * non-indexed pod, which takes any free index of its task). */
export interface WorkloadSlot {
  task: string;
  index: number | null;
}

/** The end of a workload as its status says it. */
export interface WorkloadOutcome {
  state: "SUCCEEDED" | "FAILED";
  reason: string;
  message: string;
}

/** The Kubernetes API of a kind's objects. */
export interface WorkloadResource {
  group: string;
  version: string;
  plural: string;
}
