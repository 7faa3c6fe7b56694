// Queues and quotas.
import {
  listQueues,
  createQueue,
  type CreateQueueInput,
  DEFAULT_POD_SECURITY,
  DEFAULT_QUEUE_POD_POLICY,
  DEFAULT_QUOTA_SCOPE,
  deleteQueue,
  FLEET_DEFAULT_REQUEST,
  ownNamespace,
  type Queue,
  type QueueQuota,
  setQueueQuota,
  type SetQueueQuotaInput,
  updateQueue,
  type UpdateQueueInput,
} from "../../store/index.js";
import { adminOnly, anyRole, guarded, actorOf } from "../auth.js";
import type { ApiContext } from "../context.js";
import { asArgs, inInput } from "../errors.js";
import { iso } from "../views.js";

const actor = actorOf;

export const queueResolvers = {
  Query: {
    queues: guarded(anyRole, asArgs, (_a, ctx) => listQueues(ctx.store)),
    queue: guarded(anyRole, asArgs, (a: { name: string }, ctx) => ctx.loaders.queue.load(a.name)),
  },
  Mutation: {
    createQueue: guarded(adminOnly, inInput, (a: { input: CreateQueueInput }, ctx) =>
      createQueue(ctx.store, actor(ctx), a.input),
    ),
    updateQueue: guarded(
      adminOnly,
      (f) => (f === "name" ? "name" : `input.${f}`),
      (a: { name: string; input: Omit<UpdateQueueInput, "name"> }, ctx) =>
        updateQueue(ctx.store, actor(ctx), { ...a.input, name: a.name }),
    ),
    deleteQueue: guarded(adminOnly, asArgs, (a: { name: string }, ctx) =>
      deleteQueue(ctx.store, actor(ctx), a),
    ),
    setQueueQuota: guarded(adminOnly, inInput, (a: { input: SetQueueQuotaInput }, ctx) =>
      setQueueQuota(ctx.store, actor(ctx), a.input),
    ),
  },
  Queue: {
    parent: (q: Queue, _a: unknown, ctx: ApiContext) =>
      q.parentName ? ctx.loaders.queue.load(q.parentName) : null,
    children: (q: Queue, _a: unknown, ctx: ApiContext) => ctx.loaders.queueChildren.load(q.name),
    quotas: async (q: Queue, _a: unknown, ctx: ApiContext) =>
      (await ctx.loaders.quotas.load(q.name)).map((r: QueueQuota) => ({
        cluster: r.scope === DEFAULT_QUOTA_SCOPE ? null : r.scope,
        resource: r.resource,
        deserved: r.deserved,
        limit: r.limit,
        overQuotaWeight: r.overQuotaWeight,
      })),
    createdAt: (q: Queue) => iso(q.createdAt),
    namespaces: async (q: Queue, _a: unknown, ctx: ApiContext) =>
      (await ctx.loaders.queuePolicies()).get(q.name)?.namespaces ?? [ownNamespace(q.name)],
    podSecurity: async (q: Queue, _a: unknown, ctx: ApiContext) =>
      (await ctx.loaders.queuePolicies()).get(q.name)?.podSecurity ?? DEFAULT_POD_SECURITY,
    podPolicy: async (q: Queue, _a: unknown, ctx: ApiContext) =>
      (await ctx.loaders.queuePolicies()).get(q.name)?.pod ?? DEFAULT_QUEUE_POD_POLICY,
    defaultRequest: async (q: Queue, _a: unknown, ctx: ApiContext) => {
      const d = (await ctx.loaders.queuePolicies()).get(q.name)?.defaultRequest ?? FLEET_DEFAULT_REQUEST;
      return { cpu: d.cpuMillis, memory: d.memory, gpu: null, gpuMemory: null };
    },
  },
};
