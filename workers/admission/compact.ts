// A compact snapshot for admission's dry runs: the pods that hold resources reduced to what the
// core needs to answer "does this fit": on each node, one pod holding what its pods hold (and one
// for what is being released), and per queue, what its pods hold (QueueSpec.heldElsewhere). A
// cluster of 25,000 running pods becomes one pod per node; the fit answers stay the same (checked
// against the full snapshot by a test).
import {
  type HeldElsewhere,
  holdsNode,
  isAllocated,
  type NodeSpec,
  type PodGroupSpec,
  type PodSpec,
  type QueueSpec,
  type QuotaVector,
  type Snapshot,
} from "../../src/core/index.js";

/** The job of the per-node pods: its queue is in no snapshot, so no queue counts them twice. */
export const HELD_JOB = "\u0000held";

function isEmpty(o: Record<string, number> | undefined): boolean {
  for (const _ in o) return false;
  return true;
}

/** A pod that holds whole resources only (no shared GPU, MIG or extended resource). */
function isPlain(p: PodSpec, node: NodeSpec): boolean {
  const r = p.request;
  if (r.gpuFraction || r.gpuMemory || !isEmpty(r.mig) || !isEmpty(r.extended)) return false;
  if (p.gpuGroups.length || p.legacyMig) return false;
  // On a node that reports devices, the pod must name the devices it holds (else the core chooses).
  if (node.gpuDevices?.length && r.gpus > 0) return (p.gpuDevices?.length ?? 0) === r.gpus;
  return true;
}

const zeroQuota = (): QuotaVector => ({ gpu: 0, cpuMillis: 0, memory: 0 });

function addQuota(q: QuotaVector, p: PodSpec): void {
  q.gpu = Math.round((q.gpu + p.request.gpus) * 1e6) / 1e6;
  q.cpuMillis += p.request.cpuMillis;
  q.memory += p.request.memory;
}

function aggregatePod(node: string, pods: readonly PodSpec[]): PodSpec {
  const devices = pods.flatMap((p) => p.gpuDevices ?? []);
  return {
    uid: `${node}\u0000held`,
    name: `${node}\u0000held`,
    namespace: "",
    status: "Running",
    node,
    request: {
      cpuMillis: pods.reduce((s, p) => s + p.request.cpuMillis, 0),
      memory: pods.reduce((s, p) => s + p.request.memory, 0),
      gpus: pods.reduce((s, p) => s + p.request.gpus, 0),
      gpuFraction: 0,
      gpuMemory: 0,
      mig: {},
      extended: {},
    },
    gpuGroups: [],
    ...(devices.length ? { gpuDevices: devices } : {}),
    labels: {},
    subGroup: null,
    priority: null,
    createdAt: null,
  };
}

/**
 * `held`: jobs with nothing waiting (their pods that hold no node are left out). Returns the
 * snapshot with those pods compacted: nodes whose held pods are all plain get one aggregate
 * pod (their pod room shrunk by the pods folded in), the queues carry what their
 * folded pods hold; every other pod is kept as it is.
 */
export function compactHeld(snapshot: Snapshot, held: readonly PodGroupSpec[]): Snapshot {
  const nodes = new Map(snapshot.nodes.map((n) => [n.name, n]));
  // Per node, the jobs and pods on it, and whether every one of them can be folded.
  const onNode = new Map<string, { jobs: PodGroupSpec[]; pods: PodSpec[]; plain: boolean }>();
  for (const job of held)
    for (const pod of job.pods) {
      const node = pod.node ? nodes.get(pod.node) : undefined;
      if (!node || !holdsNode(pod.status)) continue;
      let at = onNode.get(node.name);
      if (!at) {
        at = { jobs: [], pods: [], plain: true };
        onNode.set(node.name, at);
      }
      at.jobs.push(job);
      at.pods.push(pod);
      at.plain &&= isPlain(pod, node);
    }
  const folded = new Set<PodSpec>();
  const byQueue = new Map<string, HeldElsewhere>();
  const aggregates: PodSpec[] = [];
  const shrunk = new Map<string, number>();
  for (const [name, at] of onNode) {
    if (!at.plain || !distinctDevices(at.pods)) continue; // overlapping devices: keep as they are
    // Pods being released stay as they are: their pod count is room that comes free.
    const fold: PodSpec[] = [];
    for (const [i, pod] of at.pods.entries()) {
      if (pod.status === "Releasing") continue;
      fold.push(pod);
      folded.add(pod);
      if (!isAllocated(pod.status)) continue;
      const job = at.jobs[i]!;
      let q = byQueue.get(job.queue);
      if (!q) {
        q = { allocated: zeroQuota(), allocatedNotPreemptible: zeroQuota() };
        byQueue.set(job.queue, q);
      }
      addQuota(q.allocated, pod);
      if (!job.preemptible) addQuota(q.allocatedNotPreemptible, pod);
    }
    if (!fold.length) continue;
    aggregates.push(aggregatePod(name, fold));
    shrunk.set(name, fold.length - 1);
  }
  // The jobs with pods left that hold a node, reduced to those pods.
  const kept: PodGroupSpec[] = [];
  for (const j of held) {
    const pods = j.pods.filter((p) => !folded.has(p) && holdsNode(p.status));
    if (!pods.length) continue;
    kept.push(
      pods.length === j.pods.length ? j : { ...j, pods, minMember: Math.min(j.minMember, pods.length) },
    );
  }
  const queues = snapshot.queues.map((q): QueueSpec => {
    const extra = byQueue.get(q.name);
    return extra ? { ...q, heldElsewhere: mergeHeld(q.heldElsewhere, extra) } : q;
  });
  const heldJob: PodGroupSpec = {
    uid: HELD_JOB,
    name: HELD_JOB,
    namespace: "",
    queue: HELD_JOB,
    priority: 0,
    preemptible: false,
    minMember: aggregates.length,
    createdAt: 0,
    lastStartAt: null,
    staleSince: null,
    subGroups: [],
    topology: null,
    pods: aggregates,
  };
  return {
    now: snapshot.now,
    nodes: snapshot.nodes.map((n) => {
      const fewer = shrunk.get(n.name);
      return fewer ? { ...n, allocatable: { ...n.allocatable, pods: n.allocatable.pods - fewer } } : n;
    }),
    queues,
    jobs: aggregates.length ? [heldJob, ...kept] : kept,
    topologies: snapshot.topologies,
  };
}

/** One ready node holding the ready nodes' total: all fair shares need of the nodes when no pod
 * of the snapshot holds a node (the held ones counted through the queues). */
export function capacityNode(nodes: readonly NodeSpec[]): NodeSpec {
  const extended: Record<string, number> = {};
  let cpuMillis = 0;
  let memory = 0;
  let gpus = 0;
  let pods = 0;
  for (const n of nodes) {
    if (!n.ready) continue;
    cpuMillis += n.allocatable.cpuMillis;
    memory += n.allocatable.memory;
    gpus += n.allocatable.gpus;
    pods += n.allocatable.pods;
    for (const [k, v] of Object.entries(n.allocatable.extended)) extended[k] = (extended[k] ?? 0) + v;
  }
  return {
    name: "\u0000capacity",
    labels: {},
    taints: [],
    unschedulable: true,
    ready: true,
    allocatable: { cpuMillis, memory, gpus, pods, extended },
    gpuMemory: 0,
    gpuMemorySynced: false,
    gpuModel: null,
    migStrategy: null,
  };
}

function distinctDevices(pods: readonly PodSpec[]): boolean {
  const seen = new Set<number>();
  for (const p of pods)
    for (const d of p.gpuDevices ?? []) {
      if (seen.has(d)) return false;
      seen.add(d);
    }
  return true;
}

function mergeHeld(a: HeldElsewhere | null | undefined, b: HeldElsewhere): HeldElsewhere {
  if (!a) return b;
  const sum = (x: QuotaVector, y: QuotaVector): QuotaVector => ({
    gpu: Math.round((x.gpu + y.gpu) * 1e6) / 1e6,
    cpuMillis: x.cpuMillis + y.cpuMillis,
    memory: x.memory + y.memory,
  });
  return {
    allocated: sum(a.allocated, b.allocated),
    allocatedNotPreemptible: sum(a.allocatedNotPreemptible, b.allocatedNotPreemptible),
  };
}
