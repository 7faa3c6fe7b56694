// Whether a domain can hold a (sub-)group, and the packing sort (KAI: job_filtering.go).
// A call works on the subtree of its lowest common domain (its scope). As in KAI, only
// domains inside the scope have figures for the call: any other domain counts as having
// no free resources and no pod count (KAI resets the whole tree and recomputes only the
// scope's subtree).
import { type Amounts, compareIds, type Domain, NO_AMOUNTS } from "./domain-tree.js";
import { ratioToFree } from "./job-demand.js";
import { domainFitError, insufficientResources, tooFewPods } from "./messages.js";

/** KAI's allocatablePodsNotSet: the job is judged by its resource ratio instead. */
export const PODS_NOT_SET = -1;

/** What a subsetting call places, and where it has figures. */
export interface FitContext {
  /** Domains below this one (itself included) have figures. */
  scope: Domain;
  /** Summed request of the tasks. */
  total: Amounts;
  tasksCount: number;
  /** Representative-pod count of a domain in scope; null when the tasks are judged by ratio. */
  podsOf: ((d: Domain) => number) | null;
  /** Sub-group name, for messages. */
  subGroup: string;
}

const freeOf = (ctx: FitContext, d: Domain): Amounts => (ctx.scope.holds(d) ? d : NO_AMOUNTS);
const podsOf = (ctx: FitContext, d: Domain): number =>
  ctx.podsOf && ctx.scope.holds(d) ? ctx.podsOf(d) : PODS_NOT_SET;

/** KAI: checkJobDomainFit. */
export function domainFits(d: Domain, ctx: FitContext): boolean {
  const pods = podsOf(ctx, d);
  if (pods !== PODS_NOT_SET) return pods >= ctx.tasksCount;
  return ratioToFree(ctx.total, freeOf(ctx, d)) <= 1;
}

/** domainFits for a domain known to be in the scope. */
export function fitsInScope(d: Domain, ctx: FitContext): boolean {
  if (ctx.podsOf) return ctx.podsOf(d) >= ctx.tasksCount;
  return ratioToFree(ctx.total, d) <= 1;
}

/** Why `d` cannot hold the tasks, or null when it can. */
export function domainMisfit(d: Domain, ctx: FitContext): string | null {
  if (domainFits(d, ctx)) return null;
  const pods = podsOf(ctx, d);
  if (pods !== PODS_NOT_SET)
    return domainFitError(ctx.subGroup, d.id, [tooFewPods(d.id, pods, ctx.tasksCount)]);
  return domainFitError(ctx.subGroup, d.id, insufficientResources(d.id, ctx.total, freeOf(ctx, d)));
}

/**
 * Order every domain's children most packed first (highest share of their free
 * resources the tasks would take), ties by id, from `d` down to the `maxDepthLevel`
 * domains (KAI: sortTree). Mutates the tree on purpose, as KAI does: the order is what
 * the domain list and the preferred-level scores read. KAI also sorts the children of
 * the `maxDepthLevel` domains; nothing reads that order before a later call sorts it
 * again, so it is skipped (it is the bulk of the work on a tree with a host level).
 */
export function sortForPacking(d: Domain, ctx: FitContext, maxDepthLevel: string | null): void {
  if (!maxDepthLevel || d.level === maxDepthLevel) return;
  const kids = d.children;
  if (kids.length > 1) {
    // Called on the scope, so every domain reached has figures.
    for (const c of kids) c.packRatio = ratioToFree(ctx.total, c);
    kids.sort((a, b) => {
      if (a.packRatio !== b.packRatio) return b.packRatio > a.packRatio ? 1 : -1;
      return compareIds(a.id, b.id);
    });
  }
  for (const c of kids) sortForPacking(c, ctx, maxDepthLevel);
}
