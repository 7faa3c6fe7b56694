// Seeded random cluster snapshots for property tests: small clusters with placed jobs
// that fit their nodes, pending jobs, gangs, elastic jobs and the odd stale gang.
import type { PodGroupSpec, PodSpec, QueueSpec, Snapshot } from "../../../src/core/index.js";
import { seededRandom as prng } from "../../../src/core/util/random.js";
import { NOW, gpuNode, queue } from "./snapshots.js";

export { prng };

const GB = 1e9;

export interface Generated {
  snapshot: Snapshot;
  /** Leaf queues are all top-level (reclaim's deserved check is then per leaf). */
  flat: boolean;
}

/** A small random cluster: placed jobs that fit their nodes, pending jobs, some gangs, elastic jobs and stale gangs. */
export function generate(seed: number): Generated {
  const rnd = prng(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!;

  const nodes = Array.from({ length: int(1, 5) }, (_, i) =>
    gpuNode(`n${i}`, rnd() < 0.15 ? 0 : pick([2, 4, 8])),
  );
  const free = new Map(nodes.map((n) => [n.name, n.allocatable.gpus]));

  const flat = seed % 2 === 0;
  const queues: QueueSpec[] = [];
  const leaves: string[] = [];
  if (flat) {
    for (let i = 0; i < int(1, 4); i++) {
      queues.push(
        queue(`q${i}`, i, { deserved: int(0, 4), weight: int(0, 1), priority: pick([100, 100, 90]) }),
      );
      leaves.push(`q${i}`);
    }
  } else {
    for (let d = 0; d < 2; d++) {
      queues.push(queue(`d${d}`, queues.length, { deserved: int(0, 6), weight: int(0, 2) }));
      for (let i = 0; i < int(1, 2); i++) {
        queues.push(
          queue(`d${d}-q${i}`, queues.length, { parent: `d${d}`, deserved: int(0, 3), weight: int(0, 1) }),
        );
        leaves.push(`d${d}-q${i}`);
      }
    }
  }

  const jobs: PodGroupSpec[] = [];
  const priorities = [40, 50, 60, 80, 100, 125];
  const addJob = (kind: "running" | "pending" | "stale") => {
    const name = `j${jobs.length}`;
    const size = int(1, 3);
    const gpus = pick([0, 1, 1, 1, 2]);
    const elastic = size > 1 && rnd() < 0.3;
    const minMember = elastic ? int(1, size - 1) : size;
    const pods: PodSpec[] = [];
    for (let i = 0; i < size; i++) {
      let status: PodSpec["status"] = "Pending";
      let node: string | null = null;
      const place = kind === "running" || (kind === "stale" && i === 0);
      if (place) {
        const fits = nodes.filter((n) => free.get(n.name)! >= gpus);
        if (fits.length === 0) return;
        node = pick(fits).name;
        free.set(node, free.get(node)! - gpus);
        status = "Running";
      }
      pods.push({
        uid: `${name}-${i}`,
        name: `${name}-${i}`,
        namespace: "ns",
        status,
        node,
        request: { cpuMillis: 1000, memory: GB, gpus, gpuFraction: 0, gpuMemory: 0, mig: {}, extended: {} },
        gpuGroups: [],
        labels: {},
        subGroup: null,
        priority: null,
        createdAt: null,
      });
    }
    const priority = pick(priorities);
    jobs.push({
      uid: name,
      name,
      namespace: "ns",
      queue: pick(leaves),
      priority,
      preemptible: priority < 100,
      // A stale gang has one placed pod while it needs more.
      minMember: kind === "stale" ? size : minMember,
      createdAt: NOW - int(1, 600) * 60_000,
      lastStartAt: kind === "pending" ? null : NOW - 60_000,
      staleSince: null,
      subGroups: [],
      topology: null,
      pods,
    });
  };
  for (let i = 0; i < int(1, 8); i++) addJob("running");
  for (let i = 0; i < int(1, 6); i++) addJob("pending");
  if (rnd() < 0.2) addJob("stale");
  return { snapshot: { now: NOW, nodes, queues, jobs, topologies: [] }, flat };
}
