// Subscriptions: job updates and queue events, fed by the Redis event bus (so a change made
// through any API replica, worker or agent reaches subscribers of every replica).
import { z } from "zod";
import { jobById, type Job, type StoreEvent } from "../../store/index.js";
import { anyRole, guarded, principalOf } from "../auth.js";
import type { ApiContext } from "../context.js";
import { createLoaders } from "../context-loaders.js";
import { asArgs, badInput, notFound } from "../errors.js";
import { eventStream } from "../event-stream.js";

/** Each delivery reads fresh rows: the context (and its loaders' cache) lives as long as the subscription. */
const freshLoaders = (ctx: ApiContext) => {
  ctx.loaders = createLoaders(ctx.store);
};

const publicEvent = (e: StoreEvent) => ({ ...e });

export const subscriptionResolvers = {
  Subscription: {
    jobUpdated: {
      subscribe: guarded(anyRole, asArgs, async (a: { id: string }, ctx: ApiContext) => {
        if (!z.uuid().safeParse(a.id).success) throw badInput("id", `id: "${a.id}" is not a job id`);
        if (!(await jobById(ctx.store, a.id))) {
          throw notFound(`job "${a.id}" not found`, "id");
        }
        return eventStream(ctx.bus, async (e) => {
          if (e.job !== a.id) return null;
          return jobById(ctx.store, a.id);
        });
      }),
      resolve: (job: Job, _a: unknown, ctx: ApiContext) => {
        freshLoaders(ctx);
        return job;
      },
    },
    queueEvents: {
      subscribe: guarded(anyRole, asArgs, async (a: { queue?: string | null }, ctx: ApiContext) => {
        const admin = principalOf(ctx).role === "ADMIN";
        const subtreeOf = async (queue: string) =>
          new Set((await createLoaders(ctx.store).queueTree()).subtree(queue));
        let subtree: Set<string> | null = null;
        if (a.queue) {
          subtree = await subtreeOf(a.queue);
          if (!subtree.size) throw badInput("queue", `queue: queue "${a.queue}" does not exist`);
        }
        return eventStream(ctx.bus, async (e) => {
          if (!admin && e.kind.startsWith("token.")) return null;
          if (!a.queue) return publicEvent(e);
          // The subtree's shape may have changed (a queue created or moved below it).
          if (e.kind.startsWith("queue.")) subtree = await subtreeOf(a.queue);
          return e.queue && subtree?.has(e.queue) ? publicEvent(e) : null;
        });
      }),
      resolve: (e: StoreEvent) => e,
    },
  },
};
