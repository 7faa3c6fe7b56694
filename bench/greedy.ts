// The baseline: a naive greedy first-fit of every pending pod, in list order, onto the
// first node with enough free CPU, memory and GPUs — no queues, gangs or scoring (a GPU
// fraction counts as that much of a GPU, with no device packing).
import type { Snapshot } from "../src/core/index.js";

export function greedyFirstFit(s: Snapshot): number {
  const n = s.nodes.length;
  const cpu = new Float64Array(n);
  const mem = new Float64Array(n);
  const gpu = new Float64Array(n);
  const index = new Map<string, number>();
  s.nodes.forEach((node, i) => {
    cpu[i] = node.allocatable.cpuMillis;
    mem[i] = node.allocatable.memory;
    gpu[i] = node.allocatable.gpus;
    index.set(node.name, i);
  });
  for (const j of s.jobs)
    for (const p of j.pods)
      if (p.status === "Running" && p.node !== null) {
        const i = index.get(p.node)!;
        cpu[i]! -= p.request.cpuMillis;
        mem[i]! -= p.request.memory;
        gpu[i]! -= p.request.gpus + p.request.gpuFraction;
      }
  let placed = 0;
  for (const j of s.jobs)
    for (const p of j.pods) {
      if (p.status !== "Pending") continue;
      const r = p.request;
      for (let i = 0; i < n; i++) {
        if (cpu[i]! >= r.cpuMillis && mem[i]! >= r.memory && gpu[i]! >= r.gpus + r.gpuFraction) {
          cpu[i]! -= r.cpuMillis;
          mem[i]! -= r.memory;
          gpu[i]! -= r.gpus + r.gpuFraction;
          placed++;
          break;
        }
      }
    }
  return placed;
}
