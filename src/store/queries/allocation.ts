// What pods hold on nodes: sums of the requests of pods in BINDING, RUNNING or RELEASING, per
// cluster and node, read from node_allocation (kept by triggers on pod as pods change) instead of
// summing every pod of the cluster.
import type { PrismaClient } from "../db.js";

export interface ResourceSum {
  cpuMillis: number;
  memory: bigint;
  /** Devices, fractions included. */
  gpu: number;
  gpuMemory: number;
}

export const zeroSum = (): ResourceSum => ({ cpuMillis: 0, memory: 0n, gpu: 0, gpuMemory: 0 });

export const addSums = (a: ResourceSum, b: ResourceSum): ResourceSum => ({
  cpuMillis: a.cpuMillis + b.cpuMillis,
  memory: a.memory + b.memory,
  gpu: a.gpu + b.gpu,
  gpuMemory: a.gpuMemory + b.gpuMemory,
});

/** A summed row as the database answers it (memory as text: it may exceed 2^53). */
interface SumRow {
  cpu: bigint;
  memory: string;
  gpu: number;
  gpu_memory: bigint;
}

const sumOf = (r: SumRow): ResourceSum => ({
  cpuMillis: Number(r.cpu),
  memory: BigInt(r.memory),
  gpu: r.gpu,
  gpuMemory: Number(r.gpu_memory),
});

/** cluster → node → sum. */
export async function allocatedByNode(
  prisma: PrismaClient,
  clusters: readonly string[],
): Promise<Map<string, Map<string, ResourceSum>>> {
  const out = new Map<string, Map<string, ResourceSum>>();
  if (!clusters.length) return out;
  const rows = await prisma.$queryRaw<(SumRow & { cluster: string; node: string })[]>`
    SELECT cluster_name AS cluster, node_name AS node, cpu_millis AS cpu, trunc(memory)::text AS memory,
           gpu::float8 AS gpu, gpu_memory
    FROM node_allocation
    WHERE cluster_name = ANY(${[...clusters]}::text[]) AND pods > 0`;
  for (const r of rows) {
    const nodes = out.get(r.cluster) ?? new Map<string, ResourceSum>();
    nodes.set(r.node, sumOf(r));
    out.set(r.cluster, nodes);
  }
  return out;
}

/** cluster → what pods hold on its nodes, in all (pods on nodes that are gone included): one
 * row per cluster. */
export async function allocatedByCluster(
  prisma: PrismaClient,
  clusters: readonly string[],
): Promise<Map<string, ResourceSum>> {
  if (!clusters.length) return new Map();
  const rows = await prisma.$queryRaw<(SumRow & { cluster: string })[]>`
    SELECT cluster_name AS cluster, sum(cpu_millis)::bigint AS cpu, trunc(sum(memory))::text AS memory,
           sum(gpu)::float8 AS gpu, sum(gpu_memory)::bigint AS gpu_memory
    FROM node_allocation WHERE cluster_name = ANY(${[...clusters]}::text[])
    GROUP BY 1`;
  return new Map(rows.map((r) => [r.cluster, sumOf(r)]));
}

/** A cluster's nodes, counted and summed. */
export interface ClusterCapacity {
  nodes: number;
  /** GPU memory: devices × memory per device. */
  capacity: ResourceSum;
}

/** cluster → its nodes, counted and summed by the database (one row per cluster, not one per
 * node); a cluster without nodes is absent. */
export async function capacityByCluster(
  prisma: PrismaClient,
  clusters: readonly string[],
): Promise<Map<string, ClusterCapacity>> {
  if (!clusters.length) return new Map();
  const rows = await prisma.$queryRaw<(SumRow & { cluster: string; nodes: number })[]>`
    SELECT cluster_name AS cluster, count(*)::int AS nodes, sum(cpu_millis)::bigint AS cpu,
           sum(memory)::text AS memory, sum(gpus)::float8 AS gpu,
           sum(gpus::bigint * gpu_memory)::bigint AS gpu_memory
    FROM node WHERE cluster_name = ANY(${[...clusters]}::text[])
    GROUP BY 1`;
  return new Map(rows.map((r) => [r.cluster, { nodes: r.nodes, capacity: sumOf(r) }]));
}
