// Seeded synthetic cluster snapshots for the core benchmark (no I/O, no randomness
// beyond the seed): the same seed and shape always give the same snapshot.
import {
  type NodeSpec,
  type PodGroupSpec,
  type PodSpec,
  type QueueSpec,
  type Snapshot,
  seededRandom as prng,
} from "../src/core/index.js";

export { prng };

export const NOW = Date.UTC(2025, 0, 1);
const GiB = 1024 ** 3;

export function node(
  name: string,
  cpuMillis: number,
  memory: number,
  gpus: number,
  labels: Record<string, string> = {},
): NodeSpec {
  return {
    name,
    labels,
    taints: [],
    unschedulable: false,
    ready: true,
    allocatable: { cpuMillis, memory, gpus, pods: 110, extended: {} },
    gpuMemory: 81920,
    gpuMemorySynced: true,
    gpuModel: gpus > 0 ? "A100" : null,
    migStrategy: null,
  };
}

export function pod(
  name: string,
  req: { cpuMillis: number; memory: number; gpus: number },
  status: PodSpec["status"] = "Pending",
  nodeName: string | null = null,
): PodSpec {
  return {
    uid: name,
    name,
    namespace: "bench",
    status,
    node: nodeName,
    request: {
      cpuMillis: req.cpuMillis,
      memory: req.memory,
      gpus: req.gpus,
      gpuFraction: 0,
      gpuMemory: 0,
      mig: {},
      extended: {},
    },
    gpuGroups: [],
    labels: {},
    subGroup: null,
    priority: null,
    createdAt: null,
  };
}

export function job(
  name: string,
  queue: string,
  pods: PodSpec[],
  createdAt: number,
  priority = 50,
): PodGroupSpec {
  return {
    uid: name,
    name,
    namespace: "bench",
    queue,
    priority,
    preemptible: priority < 100,
    minMember: pods.length,
    createdAt,
    lastStartAt: pods.some((p) => p.status === "Running") ? NOW - 60_000 : null,
    staleSince: null,
    subGroups: [],
    topology: null,
    pods,
  };
}

export function queue(name: string, parent: string | null, i: number, deservedGpu: number): QueueSpec {
  return {
    name,
    parent,
    priority: 100,
    createdAt: NOW + i,
    deserved: { gpu: deservedGpu, cpuMillis: -1, memory: -1 },
    limit: { gpu: -1, cpuMillis: -1, memory: -1 },
    overQuotaWeight: { gpu: 1, cpuMillis: 1, memory: 1 },
  };
}

/** A tree of `perLevel[0]` roots, each with `perLevel[1]` children, …; returns all queues and the leaves. */
export function queueTree(perLevel: number[], totalGpus: number): { queues: QueueSpec[]; leaves: string[] } {
  const queues: QueueSpec[] = [];
  const leaves: string[] = [];
  const build = (parent: string | null, depth: number, prefix: string, share: number) => {
    for (let i = 0; i < perLevel[depth]!; i++) {
      const name = `${prefix}${depth === 0 ? "org" : depth === 1 ? "dept" : "team"}${i}`;
      const deserved = Math.floor(share / perLevel[depth]!);
      queues.push(queue(name, parent, queues.length, deserved));
      if (depth + 1 < perLevel.length) build(name, depth + 1, `${name}-`, deserved);
      else leaves.push(name);
    }
  };
  build(null, 0, "", totalGpus);
  return { queues, leaves };
}

/** KAI's benchmark shape: n nodes of 8 GPUs, single-GPU jobs, 4 queues under 2 departments. */
export function kaiShape(nodes: number, jobs: number, seed = 1): Snapshot {
  const rnd = prng(seed);
  const { queues, leaves } = queueTree([2, 2], nodes * 8);
  return {
    now: NOW,
    nodes: Array.from({ length: nodes }, (_, i) => node(`node-${i}`, 64_000, 512 * GiB, 8)),
    queues,
    jobs: Array.from({ length: jobs }, (_, i) =>
      job(
        `job-${i}`,
        leaves[Math.floor(rnd() * leaves.length)]!,
        [pod(`job-${i}-0`, { cpuMillis: 1000, memory: 4 * GiB, gpus: 1 })],
        NOW - 1000 * (jobs - i),
      ),
    ),
    topologies: [],
  };
}

/** Armada's node-db shape: `pods` one-CPU single-pod jobs onto `nodes` nodes of 32 CPUs (or the GPU twin). */
export function armadaShape(nodes: number, pods: number, gpu: boolean): Snapshot {
  const { queues, leaves } = queueTree([2, 2], gpu ? nodes * 8 : 0);
  return {
    now: NOW,
    nodes: Array.from({ length: nodes }, (_, i) =>
      gpu ? node(`node-${i}`, 128_000, 1024 * GiB, 8) : node(`node-${i}`, 32_000, 256 * GiB, 0),
    ),
    queues,
    jobs: Array.from({ length: pods }, (_, i) =>
      job(
        `job-${i}`,
        leaves[i % leaves.length]!,
        [
          pod(
            `job-${i}-0`,
            gpu ? { cpuMillis: 1000, memory: GiB, gpus: 1 } : { cpuMillis: 1000, memory: GiB, gpus: 0 },
          ),
        ],
        NOW - (pods - i),
      ),
    ),
    topologies: [],
  };
}

/**
 * Mixed GPU sharing: `nodes` nodes of 8 GPUs, `jobs` single-pod jobs of which 30 % ask a
 * fraction of one device (a quarter, half or three quarters) and the rest one whole GPU.
 */
export function mixedShape(nodes: number, jobs: number, seed = 3): Snapshot {
  const rnd = prng(seed);
  const s = kaiShape(nodes, jobs, seed);
  for (const j of s.jobs) {
    if (rnd() >= 0.3) continue;
    const r = j.pods[0]!.request;
    r.gpus = 0;
    r.gpuFraction = [0.25, 0.5, 0.75][Math.floor(rnd() * 3)]!;
  }
  return s;
}

/**
 * KAI's largest published cluster: 4,000 nodes (8 GPUs, 128 CPUs, 1 TiB), 100,000 running
 * pods (24,000 one-GPU, the rest CPU-only), 10,000 pending GPU pods in 2,500 gangs of 4,
 * over a 3-level tree of 200 queues. `pendingScale` multiplies the pending gangs (a longer backlog).
 */
export function largeShape(seed = 7, contention = false, N = 4000, pendingScale = 1): Snapshot {
  const rnd = prng(seed);
  const nodes = Array.from({ length: N }, (_, i) => node(`node-${i}`, 128_000, 1024 * GiB, 8));
  const { queues, leaves } = queueTree([4, 6, 7], N * 8);
  // 4 + 24 + 168 = 196 queues; add 4 more teams to reach 200.
  for (let i = 0; i < 4; i++) {
    const name = `org${i}-dept0-team7`;
    queues.push(queue(name, `org${i}-dept0`, queues.length, 0));
    leaves.push(name);
  }
  const jobs: PodGroupSpec[] = [];
  let t = 0;
  // Running: per node 6 one-GPU pods and 19 CPU-only pods, grouped into gangs of 4 / jobs of 19.
  for (let n = 0; n < N; n++) {
    const gpuPods = Array.from({ length: 6 }, (_, k) =>
      pod(`run-g-${n}-${k}`, { cpuMillis: 8000, memory: 32 * GiB, gpus: 1 }, "Running", `node-${n}`),
    );
    const cpuPods = Array.from({ length: 19 }, (_, k) =>
      pod(`run-c-${n}-${k}`, { cpuMillis: 3000, memory: 16 * GiB, gpus: 0 }, "Running", `node-${n}`),
    );
    const q = () => leaves[Math.floor(rnd() * leaves.length)]!;
    jobs.push(job(`run-g-${n}`, q(), gpuPods, NOW - 3_600_000 + t++, contention ? 40 : 50));
    jobs.push(job(`run-c-${n}`, q(), cpuPods, NOW - 3_600_000 + t++, 50));
  }
  for (let g = 0; g < (2500 * N * pendingScale) / 4000; g++) {
    const pods = Array.from({ length: 4 }, (_, k) =>
      pod(`pend-${g}-${k}`, { cpuMillis: 4000, memory: 16 * GiB, gpus: 1 }),
    );
    jobs.push(
      job(
        `pend-${g}`,
        leaves[Math.floor(rnd() * leaves.length)]!,
        pods,
        NOW - 600_000 + g,
        contention ? 80 : 50,
      ),
    );
  }
  return { now: NOW, nodes, queues, jobs, topologies: [] };
}
