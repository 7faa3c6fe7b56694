// The books over random sequences of sessions (the real core, all five actions), commits (the
// real planner), submissions, cancels, quota changes and an agent that carries out binds and
// evictions late or not at all for a while (cut off), on two nodes that report their devices
// (shared groups named by device index), without a database: the rows are kept in memory and
// the snapshot is built from them by the same code the workers use. After every step:
// - no shared GPU holds more memory in the books than it has (pods BINDING, RUNNING, RELEASING);
// - a pod that holds a node before a commit and after it holds the same node and GPU groups: a
//   commit never moves what a running or releasing pod holds (it runs there until evicted).
import { expect, it } from "vitest";
import { defaultSchedulerConfig, runSession, SessionCarry } from "../../src/core/index.js";
import { planCommit } from "../../src/store/operations/commit-plan.js";
import { ClusterState } from "../../src/store/snapshot/cluster-state.js";
import type {
  JobRecord,
  NodeRecord,
  PodRecord,
  QuotaRecord,
  TaskRecord,
} from "../../src/store/snapshot/records.js";
import type { PodState } from "../../src/store/types.js";
import { type Prng, prng } from "../helpers/prng.js";

const MIB = 81_920;
const C = "c1";
const QUEUES = ["team-a", "team-b"];

const NODES: NodeRecord[] = ["n0", "n1"].map((name) => ({
  name,
  labels: {},
  taints: [],
  unschedulable: false,
  ready: true,
  cpuMillis: 128_000,
  memory: 1e12,
  gpus: 8,
  gpuMemory: MIB,
  maxPods: 110,
  gpuModel: "A100",
  gpuDevices: Array.from({ length: 8 }, (_, d) => ({ index: d, nvlinkDomain: `nvlink${Math.floor(d / 4)}` })),
}));

interface Books {
  jobs: Map<string, JobRecord>;
  tasks: TaskRecord[];
  pods: Map<string, PodRecord>;
  quotas: QuotaRecord[];
  generation: number;
  /** Pods with a BIND or an EVICT request the agent has not carried out yet. */
  binding: Set<string>;
  evicting: Set<string>;
  seq: number;
}

const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`;
const holds = (s: PodState) => s === "BINDING" || s === "RUNNING" || s === "RELEASING";
const shared = (p: PodRecord) => p.gpuMemory > 0 || p.gpuFraction > 0;

function submit(b: Books, r: Prng): void {
  const kind = r.int(3);
  const request =
    kind === 0
      ? { gpus: 0, gpuFraction: 0, gpuMemory: r.pick([10_240, 20_480, 40_960]) }
      : kind === 1
        ? { gpus: 0, gpuFraction: r.pick([0.25, 0.5]), gpuMemory: 0 }
        : { gpus: 1 + r.int(2), gpuFraction: 0, gpuMemory: 0 };
  const id = uuid(++b.seq);
  const replicas = 1 + r.int(8);
  b.jobs.set(id, {
    id,
    name: `j${b.seq}`,
    namespace: "default",
    queueName: r.pick(QUEUES),
    clusterName: C,
    state: "ADMITTED",
    priority: 100,
    preemptible: true,
    minMember: replicas,
    subGroups: [],
    topology: null,
    createdAt: b.seq,
    lastStartAt: null,
    staleSince: null,
    pendingReason: null,
    held: false,
  });
  b.tasks.push({ jobId: id, name: "w", subGroup: null, nodeSelector: [], gpuModel: null });
  for (let i = 0; i < replicas; i++) {
    const pod = uuid(++b.seq);
    b.pods.set(pod, {
      id: pod,
      jobId: id,
      taskName: "w",
      name: `w-${i}`,
      state: "PENDING",
      nodeName: null,
      gpuGroups: [],
      gpuDevices: [],
      message: null,
      cpuMillis: 500,
      memory: 1e9,
      ...request,
      createdAt: b.seq,
    });
  }
}

function cancel(b: Books, r: Prng): void {
  const open = [...b.jobs.values()].filter((j) => j.state === "ADMITTED");
  if (!open.length) return;
  const job = r.pick(open);
  job.state = "CANCELLED";
  for (const p of b.pods.values()) {
    if (p.jobId !== job.id) continue;
    if (p.state === "BINDING" || p.state === "RUNNING") {
      p.state = "RELEASING";
      b.evicting.add(p.id);
    } else if (p.state === "PENDING" || p.state === "PIPELINED") {
      p.state = "FAILED";
      p.nodeName = null;
    }
  }
}

/** The agent: some binds carried out, and some evictions unless it is cut off. */
function agentResults(b: Books, r: Prng, cutOff: boolean): void {
  for (const id of [...b.binding]) {
    if (r.next() > 0.6) continue;
    b.binding.delete(id);
    const p = b.pods.get(id)!;
    if (p.state === "BINDING") p.state = "RUNNING";
  }
  if (cutOff) return;
  for (const id of [...b.evicting]) {
    if (r.next() > 0.6) continue;
    b.evicting.delete(id);
    const p = b.pods.get(id)!;
    if (p.state !== "RELEASING") continue;
    if (b.jobs.get(p.jobId)!.state === "CANCELLED") p.state = "FAILED";
    else Object.assign(p, { state: "PENDING", nodeName: null, gpuGroups: [], gpuDevices: [] });
  }
}

function podsFinish(b: Books, r: Prng, cutOff: boolean): void {
  for (const p of b.pods.values()) {
    if (p.state === "RUNNING" && r.next() < 0.2) p.state = "SUCCEEDED";
    // A pod being evicted may end first; a cut-off agent reports neither.
    if (p.state === "RELEASING" && !cutOff && r.next() < 0.2) p.state = "SUCCEEDED";
  }
  for (const j of b.jobs.values()) {
    const pods = [...b.pods.values()].filter((p) => p.jobId === j.id);
    if (j.state === "ADMITTED" && pods.every((p) => p.state === "SUCCEEDED" || p.state === "FAILED"))
      j.state = "SUCCEEDED";
  }
}

function cycle(b: Books, carry: SessionCarry, where: string): void {
  const state = new ClusterState(C);
  state.setCluster({ generation: b.generation, cordoned: false });
  state.setNodes(NODES);
  state.setQueues(
    QUEUES.map((name, i) => ({ name, parentName: null, priority: 100, createdAt: i })),
    b.quotas,
  );
  const inSnapshot = [...b.jobs.values()].filter(
    (j) => j.state === "ADMITTED" || [...b.pods.values()].some((p) => p.jobId === j.id && holds(p.state)),
  );
  const ids = new Set(inSnapshot.map((j) => j.id));
  state.setJobs({
    jobs: inSnapshot.map((j) => ({ ...j })),
    tasks: b.tasks.filter((t) => ids.has(t.jobId)),
    pods: [...b.pods.values()]
      .filter((p) => ids.has(p.jobId))
      .map((p) => ({ ...p, gpuGroups: [...p.gpuGroups], gpuDevices: [...p.gpuDevices] })),
  });
  const view = state.snapshot(1_000_000, null);
  const plan = planCommit(C, runSession(view.snapshot, defaultSchedulerConfig(), { carry }), view.rows);
  for (const c of plan.pods) {
    const p = b.pods.get(c.id)!;
    const groups = c.gpuGroups ?? p.gpuGroups;
    if (holds(p.state) && holds(c.state))
      expect(
        [c.node, groups],
        `${where}: ${p.name} of ${b.jobs.get(p.jobId)!.name} goes ${p.state} → ${c.state}`,
      ).toEqual([p.nodeName, p.gpuGroups]);
    Object.assign(p, { state: c.state, nodeName: c.node, gpuGroups: [...groups] });
    if (c.gpuDevices) p.gpuDevices = [...c.gpuDevices];
  }
  for (const q of plan.requests) (q.kind === "BIND" ? b.binding : b.evicting).add(q.podId);
  b.generation++;
}

function sharedGroupsFit(b: Books, where: string): void {
  const used = new Map<string, number>();
  for (const p of b.pods.values()) {
    if (!holds(p.state) || !shared(p)) continue;
    for (const g of p.gpuGroups) {
      const key = `${p.nodeName}/${g}`;
      used.set(key, (used.get(key) ?? 0) + (p.gpuMemory > 0 ? p.gpuMemory : p.gpuFraction * MIB));
    }
  }
  for (const [group, memory] of used) expect(memory, `${where}: group ${group}`).toBeLessThanOrEqual(MIB);
}

it.each(
  Array.from({ length: 40 }, (_, i) => i + 1),
)("random sessions, commits and agent results keep every shared GPU within its memory in the books (seed %i)", (seed) => {
  const r = prng(seed);
  const b: Books = {
    jobs: new Map(),
    tasks: [],
    pods: new Map(),
    quotas: [],
    generation: 1,
    binding: new Set(),
    evicting: new Set(),
    seq: 0,
  };
  const carry = new SessionCarry();
  let cutOff = false;
  for (let step = 0; step < 300; step++) {
    const op = r.int(12);
    const where = `seed ${seed}, step ${step}`;
    if (op <= 1) submit(b, r);
    else if (op === 2) {
      if (r.next() < 0.3) cancel(b, r);
    } else if (op === 3)
      // Deserved GPUs move between the queues: reclaims and consolidations follow.
      b.quotas = QUEUES.map((queueName) => ({
        queueName,
        scope: "*",
        resource: "GPU" as const,
        deserved: r.int(16),
        limit: null,
        overQuotaWeight: null,
      }));
    else if (op === 4) cutOff = !cutOff;
    else if (op <= 6) agentResults(b, r, cutOff);
    else if (op <= 8) podsFinish(b, r, cutOff);
    else cycle(b, carry, where);
    sharedGroupsFit(b, where);
  }
});
