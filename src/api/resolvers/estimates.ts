// Job.estimatedStart / Job.estimatedCluster: the workers' stored estimate of when and where a
// pending job starts (workers/estimates), read through a per-request loader. Null when the job is
// not pending, or no estimate is known.
import type { Job } from "../../store/index.js";
import type { ApiContext } from "../context.js";
import { iso } from "../views.js";

const estimateOf = async (j: Job, ctx: ApiContext) =>
  j.state === "PENDING" ? ctx.loaders.estimate.load(j.id) : null;

export const estimateResolvers = {
  Job: {
    estimatedStart: async (j: Job, _a: unknown, ctx: ApiContext) =>
      iso((await estimateOf(j, ctx))?.start ?? null),
    estimatedCluster: async (j: Job, _a: unknown, ctx: ApiContext) => {
      const e = await estimateOf(j, ctx);
      return e?.start ? e.cluster : null;
    },
  },
};
