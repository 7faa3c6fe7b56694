// Clusters and their nodes: capacity, what pods hold, what is free.
import {
  listClusterRows,
  type Cluster,
  clusterPodPolicyOf,
  cordonCluster,
  deleteCluster,
  type Node,
  nodesPage,
  registerCluster,
  type RegisterClusterInput,
  type ResourceSum,
  zeroSum,
} from "../../store/index.js";
import { adminOnly, anyRole, guarded, actorOf } from "../auth.js";
import type { ApiContext } from "../context.js";
import { asArgs, badInput, inInput } from "../errors.js";
import { clusterStateOf, iso, labelsOf, resourcesOf, taintString } from "../views.js";

const actor = actorOf;

/** A page of a cluster's nodes, as a job's pods. */
export const MAX_NODES_PAGE = 1_000;

const capacityOf = (n: Node): ResourceSum => ({
  cpuMillis: n.cpuMillis,
  memory: n.memory,
  gpu: n.gpus,
  gpuMemory: n.gpus * n.gpuMemory,
});

const freeOf = (cap: ResourceSum, used: ResourceSum): ResourceSum => ({
  cpuMillis: Math.max(0, cap.cpuMillis - used.cpuMillis),
  memory: cap.memory > used.memory ? cap.memory - used.memory : 0n,
  gpu: Math.max(0, cap.gpu - used.gpu),
  gpuMemory: Math.max(0, cap.gpuMemory - used.gpuMemory),
});

async function nodeAllocated(n: Node, ctx: ApiContext): Promise<ResourceSum> {
  return (await ctx.loaders.allocation.load(n.clusterName)).get(n.name) ?? zeroSum();
}

// Pods on nodes that are gone still count as allocated until the agent reports them.
const clusterAllocated = (c: Cluster, ctx: ApiContext): Promise<ResourceSum> =>
  ctx.loaders.clusterAllocation.load(c.name);

// Counted and summed by the database: one row per cluster, not one per node.
const clusterCapacity = async (c: Cluster, ctx: ApiContext): Promise<ResourceSum> =>
  (await ctx.loaders.clusterCapacity.load(c.name)).capacity;

export const clusterResolvers = {
  Query: {
    clusters: guarded(anyRole, asArgs, (_a, ctx) => listClusterRows(ctx.store)),
    cluster: guarded(anyRole, asArgs, (a: { name: string }, ctx) => ctx.loaders.cluster.load(a.name)),
  },
  Mutation: {
    registerCluster: guarded(adminOnly, inInput, (a: { input: RegisterClusterInput }, ctx) =>
      registerCluster(ctx.store, actor(ctx), a.input),
    ),
    cordonCluster: guarded(adminOnly, asArgs, (a: { name: string; cordoned: boolean }, ctx) =>
      cordonCluster(ctx.store, actor(ctx), a),
    ),
    deleteCluster: guarded(adminOnly, asArgs, (a: { name: string }, ctx) =>
      deleteCluster(ctx.store, actor(ctx), a),
    ),
  },
  Cluster: {
    labels: (c: Cluster) => labelsOf(c.labels),
    state: (c: Cluster) => clusterStateOf(c),
    nodes: async (c: Cluster, a: { first?: number | null; after?: string | null }, ctx: ApiContext) => {
      const first = a.first ?? null;
      if (first !== null && (!Number.isInteger(first) || first < 0 || first > MAX_NODES_PAGE))
        throw badInput("first", `first: must be between 0 and ${MAX_NODES_PAGE}`);
      // A page is read alone: `nodes(first: 1)` of a cluster of thousands reads one row.
      if (first !== null) return nodesPage(ctx.store, c.name, first, a.after ?? null);
      const nodes = await ctx.loaders.nodes.load(c.name);
      // By position, not by comparing names: the order is the database's.
      const from = a.after == null ? 0 : nodes.findIndex((n) => n.name === a.after) + 1;
      if (a.after != null && from === 0) return [];
      return nodes.slice(from);
    },
    nodeCount: async (c: Cluster, _a: unknown, ctx: ApiContext) =>
      (await ctx.loaders.clusterCapacity.load(c.name)).nodes,
    capacity: async (c: Cluster, _a: unknown, ctx: ApiContext) => resourcesOf(await clusterCapacity(c, ctx)),
    allocated: async (c: Cluster, _a: unknown, ctx: ApiContext) =>
      resourcesOf(await clusterAllocated(c, ctx)),
    free: async (c: Cluster, _a: unknown, ctx: ApiContext) => {
      const [capacity, allocated] = await Promise.all([clusterCapacity(c, ctx), clusterAllocated(c, ctx)]);
      return resourcesOf(freeOf(capacity, allocated));
    },
    heartbeatAt: (c: Cluster) => iso(c.heartbeatAt),
    owner: async (c: Cluster, _a: unknown, ctx: ApiContext) => {
      const o = (await ctx.loaders.clusterOwners()).get(c.name);
      return o ? { worker: o.owner, since: o.since.toISOString() } : null;
    },
    generation: (c: Cluster) => Number(c.generation),
    podPolicy: (c: Cluster) => clusterPodPolicyOf(c.podPolicy),
  },
  Node: {
    labels: (n: Node) => labelsOf(n.labels),
    capacity: (n: Node) => resourcesOf(capacityOf(n)),
    allocated: async (n: Node, _a: unknown, ctx: ApiContext) => resourcesOf(await nodeAllocated(n, ctx)),
    free: async (n: Node, _a: unknown, ctx: ApiContext) =>
      resourcesOf(freeOf(capacityOf(n), await nodeAllocated(n, ctx))),
    taints: (n: Node) => (n.taints as { key: string; value?: string; effect: string }[]).map(taintString),
    gpuDevices: (n: Node) => n.gpuDevices as { index: number; nvlinkDomain?: string; numaNode?: number }[],
  },
};
