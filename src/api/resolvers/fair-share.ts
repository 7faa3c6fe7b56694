// fairShare: the core's proportion plugin on each cluster's current snapshot (src/fair-share),
// through the server's short-lived cache (fair-share-cache.ts).
import { anyRole, guarded } from "../auth.js";
import { asArgs } from "../errors.js";
import { resourcesOfQuota } from "../views.js";

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
  },
};
