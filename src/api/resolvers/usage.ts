// Chargeback: usage reports from the hourly rollups, the prices they charge, and each job's own
// usage. ADMIN sees every queue, a MEMBER the queues of their subtrees, a VIEWER fleet totals.
import {
  type Job,
  planUsageReport,
  setUsagePrice,
  type SetUsagePriceInput,
  type UsageReportInput,
  type UsageReportRow,
  usagePrices,
  usageReport,
} from "../../store/index.js";
import { actorOf, adminOnly, guarded, principalOf, type Policy } from "../auth.js";
import type { ApiContext } from "../context.js";
import { asArgs, forbidden, inInput } from "../errors.js";

/** People's roles; an AGENT speaks for a cluster and reads no reports. */
const person: Policy<unknown> = (ctx) => {
  const p = principalOf(ctx);
  if (p.role === "AGENT") throw forbidden(`AGENT token "${p.name}" may not read usage`);
};

/** The queues the caller's report covers: null = every queue. */
async function reportScope(ctx: ApiContext, groupBy: readonly string[]): Promise<string[] | null> {
  const p = principalOf(ctx);
  if (p.role === "ADMIN") return null;
  if (p.role === "VIEWER") {
    const refused = groupBy.find((g) => g === "QUEUE" || g === "LABEL");
    if (refused)
      throw forbidden(`VIEWER token "${p.name}" sees fleet totals only: not grouped by ${refused}`);
    return null;
  }
  const tree = await ctx.loaders.queueTree();
  return [...new Set(p.queues.flatMap((root) => (tree.has(root) ? tree.subtree(root) : [])))];
}

const rowView = (r: UsageReportRow) => ({
  ...r,
  periodStart: r.periodStart.toISOString(),
  periodEnd: r.periodEnd.toISOString(),
});

export const usageResolvers = {
  Query: {
    usageReport: guarded(person, asArgs, async (a: UsageReportInput, ctx) => {
      const plan = planUsageReport(a);
      const queues = await reportScope(ctx, plan.groupBy);
      return (await usageReport(ctx.store, plan, queues)).map(rowView);
    }),
    prices: guarded(person, asArgs, (_a: unknown, ctx) => usagePrices(ctx.store)),
  },
  Mutation: {
    setPrice: guarded(adminOnly, inInput, async (a: { input: SetUsagePriceInput }, ctx) => {
      await setUsagePrice(ctx.store, actorOf(ctx), a.input);
      return usagePrices(ctx.store);
    }),
  },
  Job: {
    usage: async (j: Job, _a: unknown, ctx: ApiContext) => ctx.loaders.jobUsage.load(j.id),
  },
};
