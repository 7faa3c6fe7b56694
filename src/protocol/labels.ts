// Label and annotation keys the agents read and write, in one place.

/** The schedulerName of pods fleetq places (ours, and ones users create for us). */
export const SCHEDULER_NAME = "fleetq";

/** NVIDIA GPU feature discovery node labels. */
export const GPU_RESOURCE = "nvidia.com/gpu";
export const GPU_PRODUCT_LABEL = "nvidia.com/gpu.product";
/** MiB of one device. */
export const GPU_MEMORY_LABEL = "nvidia.com/gpu.memory";
export const GPU_COUNT_LABEL = "nvidia.com/gpu.count";
/** Node annotation (set by whoever knows the hardware): the node's GPU devices as JSON,
 * [{"index":0,"nvlinkDomain":"nvl0","numaNode":0}, …], one entry per nvidia.com/gpu. */
export const GPU_TOPOLOGY_KEY = "fleetq.io/gpu-topology";
/** The container environment variable the NVIDIA container runtime reads. */
export const NVIDIA_VISIBLE_DEVICES = "NVIDIA_VISIBLE_DEVICES";

/** Topology labels the simulated clusters carry (Kubernetes clusters bring their own). */
export const ZONE_LABEL = "topology.kubernetes.io/zone";
export const RACK_LABEL = "topology.fleetq.io/rack";
export const NVSWITCH_DOMAIN_LABEL = "topology.fleetq.io/nvswitch-domain";
export const HOSTNAME_LABEL = "kubernetes.io/hostname";
export const NODE_GROUP_LABEL = "fleetq.io/node-group";

/** On pods fleetq creates or binds. */
export const JOB_ID_KEY = "fleetq.io/job-id";
export const JOB_NAME_KEY = "fleetq.io/job-name";
/** The pod's name in the control plane ("<task>-<i>"), where its Kubernetes name differs. */
export const POD_NAME_KEY = "fleetq.io/pod-name";
/** On the pod templates of a workload fleetq created (a Job, JobSet, PyTorchJob, MPIJob): its kind,
 * which says how the labels its controller gives the pods map them to the job's tasks. */
export const WORKLOAD_KIND_KEY = "fleetq.io/workload-kind";
/** On such a template whose pods run in waves (a Job's completions beyond its parallelism): a pod
 * of a later wave takes the place of any that finished, whatever its index. */
export const WAVES_KEY = "fleetq.io/waves";
/** On such a template whose controller counts its pods' indices from this offset (an MPIJob's
 * workers when its launcher runs as a worker too). */
export const INDEX_OFFSET_KEY = "fleetq.io/replica-index-offset";
/** The task a pod fleetq created belongs to (a label: `kubectl get pods -l fleetq.io/task=worker`). */
export const TASK_KEY = "fleetq.io/task";
export const QUEUE_KEY = "fleetq.io/queue";
/** On a workload manifest: how long its pods run on a simulated cluster (whole seconds). */
export const SIMULATED_DURATION_KEY = "fleetq.io/simulated-duration-seconds";
/** The gang a pod belongs to; on user-created pods it makes them a fleetq job. */
export const POD_GROUP_KEY = "fleetq.io/pod-group";
export const MIN_MEMBER_KEY = "fleetq.io/min-member";
export const PRIORITY_KEY = "fleetq.io/priority";
export const GPU_GROUPS_KEY = "fleetq.io/gpu-groups";
/** Device indices the control plane chose for a whole-GPU pod ("0,1,2,3"). */
export const GPU_DEVICES_KEY = "fleetq.io/gpu-devices";
export const GPU_FRACTION_KEY = "fleetq.io/gpu-fraction";
export const GPU_MEMORY_KEY = "fleetq.io/gpu-memory";
export const BIND_REQUEST_KEY = "fleetq.io/bind-request";
/** The cluster generation of the bind that started the pod's run: an eviction decided at an older
 * one was meant for an earlier run of the pod. */
export const BIND_GENERATION_KEY = "fleetq.io/bind-generation";
