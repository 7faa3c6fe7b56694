// Database rows → the core's snapshot types (src/core/api/spec.ts), one mapping per kind. The
// rows are compact records (snapshot/records.ts) read by one SQL reader, so the full loader and
// the workers' cluster caches build exactly the same specs from the same rows.
import {
  type GpuDeviceSpec,
  type LabelRequirement,
  type NodeSpec,
  type PodGroupSpec,
  type PodSpec,
  type QueueSpec,
  type Taint,
  type TopologyConstraintSpec,
  type TopologySpec,
  holdsNode,
} from "../../core/index.js";
import { naturalCompare } from "../collections.js";
import { isFinished } from "../domain/job-state.js";
import { CORE_POD_STATUS } from "../domain/pod-states.js";
import type { EffectiveQuota } from "../domain/quotas.js";
import type { Job, JobTask, Pod } from "../types.js";
import type { TopologyConstraint } from "../validation/submit-job.js";
import type { JobRecord, NodeRecord, PodRecord, QueueRecord, TaskRecord } from "./records.js";

export function nodeSpec(n: NodeRecord, clusterCordoned: boolean): NodeSpec {
  const spec: NodeSpec = {
    name: n.name,
    labels: n.labels,
    taints: n.taints as Taint[],
    // A cordoned cluster takes no new pods: every node is unschedulable to the session.
    unschedulable: n.unschedulable || clusterCordoned,
    ready: n.ready,
    allocatable: {
      cpuMillis: n.cpuMillis,
      memory: n.memory,
      gpus: n.gpus,
      pods: n.maxPods,
      extended: {},
    },
    gpuMemory: n.gpuMemory,
    gpuMemorySynced: n.gpuMemory > 0,
    gpuModel: n.gpuModel,
    migStrategy: null,
  };
  // Only nodes that reported their device topology: the core then chooses whole-GPU devices.
  if (n.gpuDevices.length) spec.gpuDevices = n.gpuDevices as GpuDeviceSpec[];
  return spec;
}

export function queueSpec(q: QueueRecord, quota: EffectiveQuota): QueueSpec {
  return {
    name: q.name,
    parent: q.parentName,
    priority: q.priority,
    createdAt: q.createdAt,
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

  /** Every topology seen, or only those `jobs` use. */
  topologies(jobs?: Iterable<PodGroupSpec>): TopologySpec[] {
    let specs = [...this.byName.values()];
    // Most clusters have none: no walk over their jobs then.
    if (jobs && specs.length) {
      const used = new Set<string>();
      for (const j of jobs) {
        if (j.topology?.topology) used.add(j.topology.topology);
        for (const g of j.subGroups) if (g.topology?.topology) used.add(g.topology.topology);
        if (used.size === specs.length) break;
      }
      specs = specs.filter((t) => used.has(t.name));
    }
    return specs.sort((a, b) => a.name.localeCompare(b.name));
  }
}

/** Where the maximal run of digits that ends `s` starts (s.length when it ends in no digit). */
function trailingDigits(s: string): number {
  let i = s.length;
  while (i > 0) {
    const c = s.charCodeAt(i - 1);
    if (c < 48 || c > 57) break;
    i--;
  }
  return i;
}

/** `naturalCompare`'s order, without its collator for the common case: names that differ only in the number
 * that ends them ("worker-9" < "worker-10"), numbers without leading zeros. */
export function podNameOrder(a: string, b: string): number {
  if (a === b) return 0;
  const i = trailingDigits(a);
  const j = trailingDigits(b);
  const da = a.length - i;
  const db = b.length - j;
  if (
    i === j &&
    da > 0 &&
    db > 0 &&
    (da === 1 || a.charCodeAt(i) !== 48) &&
    (db === 1 || b.charCodeAt(j) !== 48) &&
    a.startsWith(b.slice(0, j))
  ) {
    if (da !== db) return da < db ? -1 : 1;
    return a < b ? -1 : 1;
  }
  return naturalCompare(a, b);
}
const podOrder = (a: PodRecord, b: PodRecord) => podNameOrder(a.name, b.name);

/** What a task's pods share (the core reads specs, never changes them): one node selector,
 * GPU model list and request per task, so a large snapshot does not hold a copy per pod. */
interface TaskShared {
  selector: LabelRequirement[];
  gpuModels: string[];
  request: PodSpec["request"] | null;
}
const taskShared = new WeakMap<TaskRecord, TaskShared>();
function sharedOf(task: TaskRecord): TaskShared {
  let s = taskShared.get(task);
  if (!s) {
    s = {
      selector: task.nodeSelector.map(
        (m): LabelRequirement => ({ key: m.key, operator: "In", values: m.values }),
      ),
      gpuModels: task.gpuModel ? [task.gpuModel] : [],
      request: null,
    };
    taskShared.set(task, s);
  }
  return s;
}

const NO_LABELS: Record<string, string> = Object.freeze({}) as Record<string, string>;

/** The pod's request: the task's shared one when equal (pods copy their task's requests). */
function requestOf(p: PodRecord, shared: TaskShared): PodSpec["request"] {
  const r = shared.request;
  if (
    r &&
    r.cpuMillis === p.cpuMillis &&
    r.memory === p.memory &&
    r.gpus === p.gpus &&
    r.gpuFraction === p.gpuFraction &&
    r.gpuMemory === p.gpuMemory
  )
    return r;
  const request = {
    cpuMillis: p.cpuMillis,
    memory: p.memory,
    gpus: p.gpus,
    gpuFraction: p.gpuFraction,
    gpuMemory: p.gpuMemory,
    mig: {},
    extended: {},
  };
  shared.request ??= request;
  return request;
}

function podSpec(
  p: PodRecord,
  task: TaskRecord,
  namespace: string,
  grouped: boolean,
  held: boolean,
): PodSpec {
  // A held gang's pods wait behind a scheduling gate, as KAI has gated pods wait.
  const status =
    held && (p.state === "PENDING" || p.state === "PIPELINED") ? "Gated" : CORE_POD_STATUS[p.state];
  const onNode = holdsNode(status);
  const shared = sharedOf(task);
  const spec: PodSpec = {
    uid: p.id,
    name: p.name,
    namespace,
    status,
    node: onNode ? p.nodeName : null,
    request: requestOf(p, shared),
    gpuGroups: p.gpuGroups,
    labels: NO_LABELS,
    subGroup: grouped ? task.subGroup : null,
    priority: null,
    createdAt: p.createdAt,
    nodeSelector: shared.selector,
    gpuModels: shared.gpuModels,
  };
  // The devices a pod holds are part of its placement: only pods on a node carry them. Set after
  // the literal (a spread in it builds each object on a slower path).
  if (onNode && p.gpuDevices.length) spec.gpuDevices = p.gpuDevices;
  return spec;
}

/**
 * A finished (e.g. cancelled) job appears only through the pods that still hold node resources,
 * as a plain gang of exactly those pods, so the session accounts for them and schedules nothing.
 * An unfinished job's pods that already succeeded count toward its gang minimum (and a
 * sub-group's), as they do for its state (deriveJobState): a gang some of whose pods finished
 * while the others were evicted waits for the rest of its minimum only, not for one the pods it
 * has left could never meet.
 */
export function jobSpec(
  job: JobRecord,
  tasks: ReadonlyMap<string, TaskRecord>,
  pods: readonly PodRecord[],
  topologies: TopologyRegistry,
  finished = isFinished(job.state),
): PodGroupSpec {
  const included = (finished ? pods.filter((p) => holdsNode(CORE_POD_STATUS[p.state])) : [...pods]).sort(
    podOrder,
  );
  const subGroups = finished ? [] : job.subGroups;
  const succeeded = finished ? [] : pods.filter((p) => p.state === "SUCCEEDED");
  const lessSucceeded = (min: number, n: number) => (n > 0 ? Math.max(1, min - n) : min);
  const succeededIn = (group: string) =>
    succeeded.filter((p) => tasks.get(p.taskName)?.subGroup === group).length;
  return {
    uid: job.id,
    name: job.name,
    namespace: job.namespace,
    queue: job.queueName,
    priority: job.priority,
    preemptible: job.preemptible,
    minMember: finished ? included.length : lessSucceeded(job.minMember, succeeded.length),
    createdAt: job.createdAt,
    lastStartAt: job.lastStartAt,
    staleSince: job.staleSince,
    subGroups: subGroups.map((g) => ({
      name: g.name,
      minMember: lessSucceeded(g.minMember, succeededIn(g.name)),
      parent: g.parent,
      topology: topologies.constraint(g.topology),
    })),
    topology: finished ? null : topologies.constraint(job.topology),
    pods: included.map((p) =>
      podSpec(p, tasks.get(p.taskName)!, job.namespace, subGroups.length > 0, job.held && !finished),
    ),
  };
}

/** The same mapping from Prisma's objects (queries that read jobs through Prisma). */
export function podGroupSpec(
  job: Job,
  tasks: Map<string, JobTask>,
  pods: Pod[],
  finished: boolean,
  topologies: TopologyRegistry,
): PodGroupSpec {
  const taskRecords = new Map([...tasks].map(([name, t]) => [name, taskRecordOf(t)]));
  return jobSpec(jobRecordOf(job), taskRecords, pods.map(podRecordOf), topologies, finished);
}

function jobRecordOf(j: Job): JobRecord {
  return {
    id: j.id,
    name: j.name,
    namespace: j.namespace,
    queueName: j.queueName,
    clusterName: j.clusterName,
    state: j.state,
    priority: j.priority,
    preemptible: j.preemptible,
    minMember: j.minMember,
    subGroups: j.subGroups as unknown as JobRecord["subGroups"],
    topology: j.topology as unknown as JobRecord["topology"],
    createdAt: j.createdAt.getTime(),
    lastStartAt: j.lastStartAt?.getTime() ?? null,
    staleSince: j.staleSince?.getTime() ?? null,
    pendingReason: j.pendingReason as JobRecord["pendingReason"],
    held: j.restartAfter !== null,
  };
}

function taskRecordOf(t: JobTask): TaskRecord {
  return {
    jobId: t.jobId,
    name: t.name,
    subGroup: t.subGroup,
    nodeSelector: t.nodeSelector as unknown as TaskRecord["nodeSelector"],
    gpuModel: t.gpuModel,
  };
}

function podRecordOf(p: Pod): PodRecord {
  return {
    id: p.id,
    jobId: p.jobId,
    taskName: p.taskName,
    name: p.name,
    state: p.state,
    nodeName: p.nodeName,
    gpuGroups: p.gpuGroups,
    gpuDevices: p.gpuDevices,
    message: p.message,
    cpuMillis: p.cpuMillis,
    memory: Number(p.memory),
    gpus: p.gpus,
    gpuFraction: p.gpuFraction,
    gpuMemory: p.gpuMemory,
    createdAt: p.createdAt.getTime(),
  };
}
