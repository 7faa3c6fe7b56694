// fairShare: the core's proportion plugin on each cluster's current snapshot (src/fair-share),
// through the server's short-lived cache (fair-share-cache.ts); queueShareHistory: the workers'
// samples of it over time.
import { queueShareHistory } from "../../store/index.js";
import { anyRole, guarded } from "../auth.js";
import type { ApiContext } from "../context.js";
import { asArgs, badInput } from "../errors.js";
import { resourcesOfQuota } from "../views.js";

interface HistoryArgs {
  queue: string;
  cluster: string;
  from: string;
  to: string;
}

/** An ISO time argument as a Date; anything else is BAD_USER_INPUT naming the argument. */
function timeArg(field: "from" | "to", value: string): Date {
  const ms = /^\d{4}-\d{2}-\d{2}/.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms)) throw badInput(field, `${field}: "${value}" is not an ISO-8601 time`);
  return new Date(ms);
}

async function history(a: HistoryArgs, ctx: ApiContext) {
  const from = timeArg("from", a.from);
  const to = timeArg("to", a.to);
  if (from > to) throw badInput("to", `to: ${a.to} is before from (${a.from})`);
  const samples = await queueShareHistory(ctx.store, { queue: a.queue, cluster: a.cluster, from, to });
  return samples.map((s) => ({
    at: s.at.toISOString(),
    spanSeconds: s.spanSeconds,
    deserved: resourcesOfQuota(s.deserved),
    fairShare: resourcesOfQuota(s.fairShare),
    allocated: resourcesOfQuota(s.allocated),
  }));
}

export const fairShareResolvers = {
  Query: {
    fairShare: guarded(anyRole, asArgs, async (a: { cluster?: string | null }, ctx) =>
      (await ctx.fairShares.rows(a.cluster)).map((r) => ({
        queue: r.queue,
        cluster: r.cluster,
        deserved: resourcesOfQuota(r.deserved),
        fairShare: resourcesOfQuota(r.fairShare),
        allocated: resourcesOfQuota(r.allocated),
        requested: resourcesOfQuota(r.requested),
        limit: resourcesOfQuota(r.limit),
        usage: r.usage ? resourcesOfQuota(r.usage) : null,
      })),
    ),
    queueShareHistory: guarded(anyRole, asArgs, history),
  },
};
