// A compact snapshot for admission's dry runs: the pods that hold resources reduced to what the
// core needs to answer "does this fit": on each node, one pod holding what its pods hold (and one
// for what is being released), and per queue, what its pods hold (QueueSpec.heldElsewhere). A
// cluster of 25,000 running pods becomes one pod per node; the fit answers stay the same (checked
// against the full snapshot by a test).
import {
  type HeldElsewhere,
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

const HOLDS_NODE: ReadonlySet<string> = new Set(["Allocated", "Binding", "Bound", "Running", "Releasing"]);

const isEmpty = (o: Record<string, number> | undefined) => !o || Object.keys(o).length === 0;

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
 * `held`: the jobs reduced to their pods that hold resources (no pending pod). Returns the
 * snapshot with those pods compacted: nodes whose held pods are all plain get one aggregate
 * pod (their pod room shrunk by the pods folded in), the queues carry what their
 * folded pods hold; every other pod is kept as it is.
 */
export function compactHeld(snapshot: Snapshot, held: readonly PodGroupSpec[]): Snapshot {
  const nodes = new Map(snapshot.nodes.map((n) => [n.name, n]));
  const onNode = new Map<string, { job: PodGroupSpec; pod: PodSpec }[]>();
  for (const job of held)
    for (const pod of job.pods)
      if (pod.node && nodes.has(pod.node) && HOLDS_NODE.has(pod.status)) {
        const list = onNode.get(pod.node) ?? [];
        list.push({ job, pod });
        onNode.set(pod.node, list);
      }
  const folded = new Set<string>();
  const byQueue = new Map<string, HeldElsewhere>();
  const aggregates: PodSpec[] = [];
  const shrunk = new Map<string, number>();
  for (const [name, entries] of onNode) {
    const node = nodes.get(name)!;
    if (!entries.every((e) => isPlain(e.pod, node))) continue;
    const devices = entries.flatMap((e) => e.pod.gpuDevices ?? []);
    if (new Set(devices).size !== devices.length) continue; // overlapping devices: keep as they are
    // Pods being released stay as they are: their pod count is room that comes free.
    const fold = entries.filter((e) => e.pod.status !== "Releasing");
    if (!fold.length) continue;
    aggregates.push(
      aggregatePod(
        name,
        fold.map((e) => e.pod),
      ),
    );
    shrunk.set(name, fold.length - 1);
    for (const { job, pod } of fold) {
      folded.add(pod.uid);
      if (!isAllocated(pod.status)) continue;
      const q = byQueue.get(job.queue) ?? { allocated: zeroQuota(), allocatedNotPreemptible: zeroQuota() };
      addQuota(q.allocated, pod);
      if (!job.preemptible) addQuota(q.allocatedNotPreemptible, pod);
      byQueue.set(job.queue, q);
    }
  }
  const kept = held
    .map((j) => ({ ...j, pods: j.pods.filter((p) => !folded.has(p.uid)) }))
    .filter((j) => j.pods.length > 0)
    .map((j) => ({ ...j, minMember: Math.min(j.minMember, j.pods.length) }));
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
