// The contract between the agent loop and a cluster backend (Kubernetes or simulated).
// A backend owns the cluster side: it knows the nodes, carries out binds and
// evictions idempotently and tells the agent what changed. It never talks to the
// control plane itself; the agent loop does the reporting.
import type { BindRequestMessage } from "../../protocol/bind-request.js";
import type { LogRequest, ReplyErrorCode } from "../../protocol/agent-requests.js";
import type { RenderJob } from "../../render/index.js";

/** Pod states as the API's PodState enum spells them (schema.graphql). */
export type PodState = "PENDING" | "PIPELINED" | "BINDING" | "RUNNING" | "RELEASING" | "SUCCEEDED" | "FAILED";

/** One node as the cluster reports it; mirrors the API's NodeReport. */
export interface NodeInventory {
  name: string;
  capacity: {
    cpuMillis: number;
    /** Bytes. */
    memory: number;
    /** Whole GPU devices. */
    gpus: number;
    /** MiB of one GPU device (0 = unknown or no GPUs). */
    gpuMemory: number;
  };
  labels: Record<string, string>;
  gpuModel: string | null;
  /** Cordoned: no new pods should go there. */
  unschedulable: boolean;
  /** Not ready (kubelet down, ...): takes no pods either. */
  ready: boolean;
  /** How many pods the node takes. */
  maxPods: number;
  /** Kubernetes-style "key=value:Effect" (or "key:Effect"). */
  taints: string[];
  /** Its GPU devices and where they sit, when the backend knows (one per GPU); absent = unknown. */
  gpuDevices?: GpuDevice[];
}

/** One GPU device of a node: mirrors the API's GpuDeviceInput. */
export interface GpuDevice {
  index: number;
  /** NVLink / NVSwitch domain. */
  nvlinkDomain?: string;
  numaNode?: number;
}

/** A pod of a known job changed state in the cluster. */
export interface PodStateChange {
  jobId: string;
  pod: string;
  state: PodState;
  message?: string;
  /** The BIND request that started the run the change is about. */
  bindRequest?: string;
  /** SUCCEEDED, FAILED: the exit code the run ended with. */
  exitCode?: number;
  /** PENDING: a workload's controller made the pod again after its run ended. */
  recreated?: boolean;
}

/** Pods created directly in the cluster that form one gang (a pod group) not yet known
 * to the control plane: the agent reports them so they become a job. */
export interface ExternalPodGroup {
  namespace: string;
  name: string;
  queue: string;
  /** null = the gang is every pod of the group. */
  minMember: number | null;
  priority: number | null;
  pods: ExternalPod[];
}

export interface ExternalPod {
  name: string;
  /** metadata.uid: a pod deleted and created again under its name is another pod. */
  uid: string;
  resources: { cpuMillis: number; memory: number; gpus: number; gpuMemory: number };
  gpuModel: string | null;
  nodeSelector: Record<string, string>;
}

/** A pod of a job as the cluster has it: the job's id and the pod's name in the control plane. */
export interface PodRef {
  jobId: string;
  pod: string;
}

/** The complete set of fleetq pods a cluster has, read when it is reported. */
export interface PodInventory {
  /** Every pod of a job the cluster has now, finished ones included. */
  pods(): PodRef[];
  /** Pods whose bind started at or after `since` (performance.now()): a report read before
   * their bind results were sent must still list them. */
  bindsSince(since: number): PodRef[];
}

/** What the backend tells the agent, as it happens. */
export interface BackendEvents {
  /** complete = this is every node of the cluster (at start and after a relist);
   * otherwise the listed nodes changed and `deleted` names nodes that are gone. */
  nodes(nodes: NodeInventory[], complete: boolean, deleted: string[]): void;
  podStates(changes: PodStateChange[]): void;
  /** Optional: only backends that see pods created outside fleetq. */
  externalPodGroups?(groups: ExternalPodGroup[]): void;
  /** At start and after every relist: the cluster's pods are complete in `inventory`, so the
   * control plane can fail the pods it believes run there that the cluster does not have. */
  podInventory?(inventory: PodInventory): void;
  /** What workloads' objects say of themselves: their end, or a restart of their own. */
  workloadStatus?(changes: WorkloadStatusChange[]): void;
}

export interface WorkloadStatusChange {
  jobId: string;
  state: "RUNNING" | "SUCCEEDED" | "FAILED";
  reason: string;
  message: string;
}

/** The truthful answer to one BindRequest. ok=true also covers "already done". */
export interface RequestOutcome {
  ok: boolean;
  message: string;
}

export interface ClusterBackend {
  readonly kind: "kubernetes" | "simulated";
  /** How many BindRequests it carries out at once unless the agent's configuration says: what
   * the backend itself can take (the simulated cluster is memory; an API server takes a few
   * dozen writes at once from one client and answers 429 past that, which the backend retries). */
  readonly defaultConcurrency: number;
  /** Starts watching the cluster; resolves once the first complete inventory was delivered. */
  start(events: BackendEvents): Promise<void>;
  /** The cluster's key (agentBindKey), before start: what the backend seals as its own with it
   * stays its own across restarts. */
  useKey?(hexKey: string): void;
  /** Kubernetes: pods are rendered from their job (src/render), whose render input the agent
   * fetches (cached per job) and passes to bind. */
  readonly rendersPods?: boolean;
  /** Places the request's pod on its node. Idempotent: a repeat of a done bind answers ok.
   * `job`: what the job's pods are rendered from, when rendersPods (null = none: a pod users
   * created, bound as it is). */
  bind(request: BindRequestMessage, job?: RenderJob | null): Promise<RequestOutcome>;
  /** Evicts the request's pod from its node. Idempotent: a pod already gone answers ok. */
  evict(request: BindRequestMessage): Promise<RequestOutcome>;
  /** Deletes the object of the request's workload (background propagation: its controller's pods
   * go with it). Idempotent: an object already gone answers ok. */
  deleteWorkload?(request: BindRequestMessage, job: RenderJob): Promise<RequestOutcome>;
  /** Writes a pod's log into `sink` (with `query.follow`, as it is written, until the run ends or
   * `signal` aborts); resolves with why the stream ended. Throws LogError when it cannot. */
  readLogs?(query: LogQuery, sink: LogSink, signal: AbortSignal): Promise<string>;
  stop(): Promise<void>;
}

/** A log read: the request, and what the job's pods are rendered from (fetched when asked). */
export interface LogQuery extends Omit<LogRequest, "id" | "kind" | "sentAt"> {
  renderJob(): Promise<RenderJob>;
}

export interface LogSink {
  /** Whole lines, each ending in a newline; resolves once taken. */
  write(text: string): Promise<void>;
}

/** Why a log cannot be read: the pod is gone (or never was on the cluster), has not started, or
 * the cluster failed to answer. */
export class LogError extends Error {
  override name = "LogError";
  constructor(
    readonly code: ReplyErrorCode,
    message: string,
  ) {
    super(message);
  }
}
