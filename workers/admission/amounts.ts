// Resource amounts admission reasons with: what a gang needs at least, what a cluster has, holds
// and has waiting. gpu in devices (fractions included), cpu in millicores, memory in bytes.
import type { NodeSpec, PodGroupSpec, PodSpec } from "../../src/core/index.js";

export interface Amounts {
  gpu: number;
  cpuMillis: number;
  memory: number;
}

/** What a node has left: the amounts, and room for this many more pods. */
export interface NodeRoom extends Amounts {
  pods: number;
}

export const zero = (): Amounts => ({ gpu: 0, cpuMillis: 0, memory: 0 });

export const add = (a: Amounts, b: Amounts): Amounts => ({
  gpu: a.gpu + b.gpu,
  cpuMillis: a.cpuMillis + b.cpuMillis,
  memory: a.memory + b.memory,
});

export const sub = (a: Amounts, b: Amounts): Amounts => ({
  gpu: a.gpu - b.gpu,
  cpuMillis: a.cpuMillis - b.cpuMillis,
  memory: a.memory - b.memory,
});

/** Every entry of `need` within `room`. */
export const within = (need: Amounts, room: Amounts): boolean =>
  need.gpu <= room.gpu && need.cpuMillis <= room.cpuMillis && need.memory <= room.memory;

/** Whether some entry of `a` is above `b`'s. */
export const anyAbove = (a: Amounts, b: Amounts): boolean =>
  a.gpu > b.gpu || a.cpuMillis > b.cpuMillis || a.memory > b.memory;

/** The positive part of each entry. */
export const positive = (a: Amounts): Amounts => ({
  gpu: Math.max(0, a.gpu),
  cpuMillis: Math.max(0, a.cpuMillis),
  memory: Math.max(0, a.memory),
});

/** A GPU-memory request counts as one device (admission's rough view; the dry run is exact). */
export const podAmounts = (p: PodSpec): Amounts => ({
  gpu: p.request.gpus + p.request.gpuFraction + (p.request.gpuMemory > 0 && !p.request.gpuFraction ? 1 : 0),
  cpuMillis: p.request.cpuMillis,
  memory: p.request.memory,
});

export const nodeAmounts = (n: NodeSpec): Amounts => ({
  gpu: n.allocatable.gpus,
  cpuMillis: n.allocatable.cpuMillis,
  memory: n.allocatable.memory,
});

/** What the gang's minimum needs at the least: its smallest `minMember` pods. */
export function gangMinimum(job: PodGroupSpec): Amounts {
  const pods = job.pods
    .map(podAmounts)
    .sort((a, b) => a.gpu - b.gpu || a.cpuMillis - b.cpuMillis || a.memory - b.memory);
  return pods.slice(0, Math.max(1, Math.min(job.minMember, pods.length))).reduce(add, zero());
}

export const jobTotal = (job: PodGroupSpec): Amounts => job.pods.map(podAmounts).reduce(add, zero());

/** The resource a job is scheduled by: GPUs if it asks for any, else CPU. */
export const dominantResource = (a: Amounts): "gpu" | "cpuMillis" => (a.gpu > 0 ? "gpu" : "cpuMillis");
