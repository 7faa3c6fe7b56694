// What a job's Kubernetes objects are rendered from: the job as submitted (its tasks in the order
// of the spec, which ranks follow), the same for the agent that creates the objects, for
// `fleetq render` and for the API's Pod.environment.

export interface RenderTask {
  name: string;
  replicas: number;
  /** Per pod: millicores, bytes, whole GPU devices, a fraction of one device, MiB of GPU memory. */
  resources: {
    cpuMillis: number;
    memory: number;
    gpus: number;
    gpuFraction: number;
    gpuMemory: number;
    /** {name: count} of extended resources (amd.com/gpu…); absent = none. */
    extendedResources?: Record<string, number>;
  };
  /** A Pod (with spec) or a PodSpec; null = none (a Kubernetes cluster needs one). */
  template: unknown;
}

export interface RenderJob {
  /** The job's id (a UUID). */
  id: string;
  name: string;
  namespace: string;
  queue: string;
  /** The gang minimum: fewer than all pods makes the job elastic. */
  minMember: number;
  /** null = DEFAULT_RENDEZVOUS_PORT. */
  rendezvousPort: number | null;
  /** In the order of the submitted spec. */
  tasks: RenderTask[];
  /** A Kubernetes workload the job runs as (its controller makes the pods): the object to create,
   * fleetq's marks not yet added (src/workload); absent = the agent creates the pods itself. */
  workload?: RenderWorkload | null;
}

export interface RenderWorkload {
  kind: string;
  apiVersion: string;
  name: string;
  manifest: Record<string, unknown>;
}

export interface EnvVar {
  name: string;
  value: string;
}

/** Where a pod stands in its job. */
export interface PodPlace {
  task: RenderTask;
  /** Its index within its task. */
  index: number;
  /** Its index across the job: tasks in spec order, then index. */
  rank: number;
}

export const DEFAULT_RENDEZVOUS_PORT = 29500;
/** FLEETQ_PEERS lists every pod of jobs up to this size; larger ones derive them (environment.ts). */
export const MAX_LISTED_PEERS = 256;
