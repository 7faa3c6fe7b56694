// Database rows → the core's snapshot types (src/core/api/spec.ts), one mapping per kind.
import type {
  GpuDeviceSpec,
  LabelRequirement,
  NodeSpec,
  PodGroupSpec,
  PodSpec,
  PodStatus,
  QueueSpec,
  Taint,
  TopologyConstraintSpec,
  TopologySpec,
} from "../../core/api/spec.js";
import type { EffectiveQuota } from "../domain/quotas.js";
import type { Job, JobTask, Node, Pod, Queue } from "../generated/prisma/client.js";
import type { PodState } from "../generated/prisma/enums.js";
import type { SubGroupRow, TopologyConstraint } from "../validation/submit-job.js";

/** PIPELINED is session-only in the core: a pipelined pod is loaded as Pending (its nomination
 * is a hint of the last session, not a placement). */
export const CORE_POD_STATUS: Record<PodState, PodStatus> = {
  PENDING: "Pending",
  PIPELINED: "Pending",
  BINDING: "Binding",
  RUNNING: "Running",
  RELEASING: "Releasing",
  SUCCEEDED: "Succeeded",
  FAILED: "Failed",
};

const HOLDS_NODE: readonly PodStatus[] = ["Binding", "Running", "Releasing"];

export function nodeSpec(n: Node, clusterCordoned: boolean): NodeSpec {
  const devices = n.gpuDevices as unknown as GpuDeviceSpec[];
  return {
    name: n.name,
    labels: n.labels as Record<string, string>,
    taints: n.taints as unknown as Taint[],
    // A cordoned cluster takes no new pods: every node is unschedulable to the session.
    unschedulable: n.unschedulable || clusterCordoned,
    ready: n.ready,
    allocatable: {
      cpuMillis: n.cpuMillis,
      memory: Number(n.memory),
      gpus: n.gpus,
      pods: n.maxPods,
      extended: {},
    },
    gpuMemory: n.gpuMemory,
    gpuMemorySynced: n.gpuMemory > 0,
    gpuModel: n.gpuModel,
    migStrategy: null,
    // Only nodes that reported their device topology: the core then chooses whole-GPU devices.
    ...(devices.length ? { gpuDevices: devices } : {}),
  };
}

export function queueSpec(q: Queue, quota: EffectiveQuota): QueueSpec {
  return {
    name: q.name,
    parent: q.parentName,
    priority: q.priority,
    createdAt: q.createdAt.getTime(),
    deserved: quota.deserved,
    limit: quota.limit,
    overQuotaWeight: quota.overQuotaWeight,
    usage: null,
  };
}

/** Jobs carry their topology constraint as node label keys; the core wants a named topology whose
 * levels contain them. Each distinct [required, preferred] pair becomes one topology. */
export class TopologyRegistry {
  private readonly byName = new Map<string, TopologySpec>();

  constraint(t: TopologyConstraint | null): TopologyConstraintSpec | null {
    if (!t || (!t.required && !t.preferred)) return null;
    const levels = [...new Set([t.required, t.preferred].filter((l): l is string => !!l))];
    const name = `levels:${levels.join(",")}`;
    if (!this.byName.has(name)) this.byName.set(name, { name, levels });
    return { topology: name, required: t.required, preferred: t.preferred };
  }

  topologies(): TopologySpec[] {
    return [...this.byName.values()].sort((a, b) => a.name.localeCompare(b.name));
  }
}

// One collator for every comparison: localeCompare with a locale argument builds one per call,
// which dominated loading a snapshot of a few thousand pods.
const numericOrder = new Intl.Collator("en", { numeric: true });
const podOrder = (a: Pod, b: Pod) => numericOrder.compare(a.name, b.name);

function podSpec(p: Pod, task: JobTask, namespace: string, grouped: boolean): PodSpec {
  const status = CORE_POD_STATUS[p.state];
  const holdsNode = HOLDS_NODE.includes(status);
  const selector = task.nodeSelector as { key: string; values: string[] }[];
  return {
    uid: p.id,
    name: p.name,
    namespace,
    status,
    node: holdsNode ? p.nodeName : null,
    request: {
      cpuMillis: p.cpuMillis,
      memory: Number(p.memory),
      gpus: p.gpus,
      gpuFraction: p.gpuFraction,
      gpuMemory: p.gpuMemory,
      mig: {},
      extended: {},
    },
    gpuGroups: p.gpuGroups,
    // The devices a pod holds are part of its placement: only pods on a node carry them.
    ...(holdsNode && p.gpuDevices.length ? { gpuDevices: p.gpuDevices } : {}),
    labels: {},
    subGroup: grouped ? task.subGroup : null,
    priority: null,
    createdAt: p.createdAt.getTime(),
    nodeSelector: selector.map((m): LabelRequirement => ({ key: m.key, operator: "In", values: m.values })),
    gpuModels: task.gpuModel ? [task.gpuModel] : [],
  };
}

/**
 * A finished (e.g. cancelled) job appears only through the pods that still hold node resources,
 * as a plain gang of exactly those pods, so the session accounts for them and schedules nothing.
 */
export function podGroupSpec(
  job: Job,
  tasks: Map<string, JobTask>,
  pods: Pod[],
  finished: boolean,
  topologies: TopologyRegistry,
): PodGroupSpec {
  const included = (finished ? pods.filter((p) => HOLDS_NODE.includes(CORE_POD_STATUS[p.state])) : pods).sort(
    podOrder,
  );
  const subGroups = finished ? [] : (job.subGroups as unknown as SubGroupRow[]);
  return {
    uid: job.id,
    name: job.name,
    namespace: job.namespace,
    queue: job.queueName,
    priority: job.priority,
    preemptible: job.preemptible,
    minMember: finished ? included.length : job.minMember,
    createdAt: job.createdAt.getTime(),
    lastStartAt: job.lastStartAt?.getTime() ?? null,
    staleSince: job.staleSince?.getTime() ?? null,
    subGroups: subGroups.map((g) => ({
      name: g.name,
      minMember: g.minMember,
      parent: g.parent,
      topology: topologies.constraint(g.topology),
    })),
    topology: finished ? null : topologies.constraint(job.topology as TopologyConstraint | null),
    pods: included.map((p) => podSpec(p, tasks.get(p.taskName)!, job.namespace, subGroups.length > 0)),
  };
}
