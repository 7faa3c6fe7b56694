// The snapshot: the plain-data input of one scheduling session. Everything the core
// knows about a cluster arrives here; the store's loader and the scenario reader both
// produce it. JSON-serialisable on purpose (no classes, no Maps).
import type { SearchCursor } from "./result.js";

export type PodStatus =
  | "Pending"
  | "Gated"
  | "Allocated"
  | "Pipelined"
  | "Binding"
  | "Bound"
  | "Running"
  | "Releasing"
  | "Succeeded"
  | "Failed";

/** -1 means unlimited (or "deserves whatever it asks for" for `deserved`). */
export interface QuotaVector {
  gpu: number;
  cpuMillis: number;
  memory: number;
}

/** What one pod asks for. Exactly one GPU kind is used: whole `gpus`, a `gpuFraction`
 * of one device, `gpuMemory` MiB of one device, or `mig` instances. */
export interface PodRequest {
  cpuMillis: number;
  memory: number;
  /** Whole GPU devices. */
  gpus: number;
  /** 0 < f < 1: a fraction of one device; 0 = not a fractional request. */
  gpuFraction: number;
  /** MiB of one device's memory; 0 = not a memory request. */
  gpuMemory: number;
  /** MIG instances by resource name, e.g. {"nvidia.com/mig-1g.10gb": 1}. */
  mig: Record<string, number>;
  /** Other extended resources by name. */
  extended: Record<string, number>;
}

export interface Taint {
  key: string;
  value?: string;
  effect: "NoSchedule" | "PreferNoSchedule" | "NoExecute";
}

export interface Toleration {
  key?: string;
  operator?: "Equal" | "Exists";
  value?: string;
  effect?: Taint["effect"];
}

/** Kubernetes-style label requirement. */
export interface LabelRequirement {
  key: string;
  operator: "In" | "NotIn" | "Exists" | "DoesNotExist";
  values?: string[];
}

/** Required inter-pod (anti-)affinity term. */
export interface PodAffinityTerm {
  matchLabels: Record<string, string>;
  topologyKey: string;
}

/** A GPU device of a node, for device-level topology (NVLink/NVSwitch domain, NUMA node). */
export interface GpuDeviceSpec {
  index: number;
  nvlinkDomain?: string;
  numaNode?: number;
}

export interface NodeSpec {
  name: string;
  labels: Record<string, string>;
  taints: Taint[];
  unschedulable: boolean;
  /** Ready nodes count toward the cluster total; not-ready ones are skipped. */
  ready: boolean;
  allocatable: {
    cpuMillis: number;
    memory: number;
    /** Whole GPU devices (0 on a MIG node with the mixed strategy). */
    gpus: number;
    pods: number;
    /** MIG instances and other extended resources by name. */
    extended: Record<string, number>;
  };
  /** MiB per GPU device. */
  gpuMemory: number;
  /** false: GPU-memory requests never fit here. */
  gpuMemorySynced: boolean;
  gpuModel: string | null;
  migStrategy: "single" | "mixed" | null;
  /** Optional device list (length = GPU count) for device-level topology. */
  gpuDevices?: GpuDeviceSpec[];
}

export interface PodSpec {
  /** Unique within the snapshot. */
  uid: string;
  name: string;
  namespace: string;
  status: PodStatus;
  /** Only meaningful for statuses that hold resources. */
  node: string | null;
  request: PodRequest;
  /** Shared-GPU group ids (fractional / GPU-memory pods). */
  gpuGroups: string[];
  /** Device indices a running whole-GPU pod holds, on nodes that report their devices. */
  gpuDevices?: number[];
  labels: Record<string, string>;
  /** The sub-group (pod set) this pod belongs to; null = "default". */
  subGroup: string | null;
  /** Task priority (higher first within a job); null = none. */
  priority: number | null;
  /** Creation time in ms; null = unknown (ties fall back to name). */
  createdAt: number | null;
  /** Node names the pod may run on (empty/absent = any). */
  nodeNames?: string[];
  /** All requirements must match the node's labels. */
  nodeSelector?: LabelRequirement[];
  tolerations?: Toleration[];
  podAffinity?: PodAffinityTerm[];
  podAntiAffinity?: PodAffinityTerm[];
  /** Wanted GPU models (any of); empty = any model. */
  gpuModels?: string[];
  /** GPU models the pod would rather run on, most preferred first (a soft wish, see gpumodelpreference). */
  preferredGpuModels?: string[];
  /** Node this pod was nominated to (e.g. pipelined there last cycle); scored first. */
  nominatedNode?: string | null;
  /** A legacy MIG pod: never schedulable. */
  legacyMig?: boolean;
}

export interface TopologyConstraintSpec {
  /** Name of a topology in the snapshot; null/empty = constraint ignored. */
  topology: string | null;
  /** Node label key of the level all pods must share. */
  required: string | null;
  /** Node label key of the level pods should share if they can. */
  preferred: string | null;
}

export interface SubGroupSpec {
  name: string;
  minMember: number;
  /** null = child of the job's root. */
  parent: string | null;
  topology: TopologyConstraintSpec | null;
}

export interface PodGroupSpec {
  /** Unique within the snapshot. */
  uid: string;
  name: string;
  namespace: string;
  queue: string;
  priority: number;
  preemptible: boolean;
  /** Gang minimum of the default pod set when there are no sub-groups. */
  minMember: number;
  createdAt: number;
  /** ms; null = never started. */
  lastStartAt: number | null;
  /** ms since which the gang has been below its minimum; null = not stale. */
  staleSince: number | null;
  subGroups: SubGroupSpec[];
  topology: TopologyConstraintSpec | null;
  pods: PodSpec[];
}

export interface QueueSpec {
  name: string;
  parent: string | null;
  priority: number;
  /** Creation time in ms; siblings' last tie-break (then name). */
  createdAt: number;
  deserved: QuotaVector;
  limit: QuotaVector;
  overQuotaWeight: QuotaVector;
  /** Decayed recent usage, for time-based fair share; null = none. */
  usage?: QuotaVector | null;
  /** What pods the snapshot leaves out hold for this queue (a compact snapshot that keeps only
   * each node's total in use): counted as allocated and requested, as if those pods were there. */
  heldElsewhere?: HeldElsewhere | null;
  /** Min-runtime protection in seconds; null = inherit from the parent. */
  preemptMinRuntimeSeconds?: number | null;
  reclaimMinRuntimeSeconds?: number | null;
}

export interface HeldElsewhere {
  allocated: QuotaVector;
  /** The part held by non-preemptible jobs. */
  allocatedNotPreemptible: QuotaVector;
}

export interface TopologySpec {
  name: string;
  /** Node label keys, coarse to fine. */
  levels: string[];
}

export interface Snapshot {
  /** The session's clock, in ms since the epoch. The core never reads a real clock. */
  now: number;
  nodes: NodeSpec[];
  queues: QueueSpec[];
  jobs: PodGroupSpec[];
  topologies: TopologySpec[];
  /** The previous session's stopped victim searches (SessionResult.searchCursors), to go on with. */
  searchCursors?: SearchCursor[];
}
