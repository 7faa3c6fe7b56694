// Per-call figures on a subtree and the checks built on them (KAI: job_filtering.go):
// free resources and representative-pod counts bottom-up, whether a domain can hold the
// (sub-)group, and the packing sort of the subtree.
import type { Resource } from "../../api/resources.js";
import { compareIds, type Domain, PODS_NOT_SET } from "./domain-tree.js";
import { freeOfNodes, nodeAccommodation, ratioToFree, type RepresentativePod } from "./job-demand.js";
import { domainFitError, insufficientResources, tooFewPods } from "./messages.js";

/** What a call knows about the tasks it places. */
export interface CallDemand {
  stamp: number;
  /** Summed request of the tasks. */
  total: Resource;
  tasksCount: number;
  /** Sub-group name, for messages. */
  subGroup: string;
}

/** Free resources of every domain of the subtree, stamped with this call. */
export function computeFree(d: Domain, stamp: number): Resource {
  if (d.children.length === 0) {
    const free = freeOfNodes(d.nodes);
    d.setFree(stamp, free);
    return free;
  }
  let free: Resource | null = null;
  for (const c of d.children) {
    const f = computeFree(c, stamp);
    free = free ? free.add(f) : f.clone();
  }
  d.setFree(stamp, free!);
  return free!;
}

/** Copies of the representative pod each domain of the subtree holds (after computeFree). */
export function computeAllocatablePods(d: Domain, rep: RepresentativePod, tasksCount: number): number {
  let pods = 0;
  if (d.children.length === 0) for (const n of d.nodes) pods += nodeAccommodation(rep, n, tasksCount);
  else for (const c of d.children) pods += computeAllocatablePods(c, rep, tasksCount);
  d.setAllocatablePods(pods);
  return pods;
}

/** Why `d` cannot hold the tasks (KAI: checkJobDomainFit), or null when it can. */
export function domainMisfit(d: Domain, demand: CallDemand): string | null {
  const pods = d.allocatablePods(demand.stamp);
  if (pods !== PODS_NOT_SET) {
    if (pods >= demand.tasksCount) return null;
    return domainFitError(demand.subGroup, d.id, [tooFewPods(d.id, pods, demand.tasksCount)]);
  }
  const free = d.free(demand.stamp);
  if (ratioToFree(demand.total, free) <= 1) return null;
  return domainFitError(demand.subGroup, d.id, insufficientResources(d.id, demand.total, free));
}

export function domainFits(d: Domain, demand: CallDemand): boolean {
  const pods = d.allocatablePods(demand.stamp);
  if (pods !== PODS_NOT_SET) return pods >= demand.tasksCount;
  return ratioToFree(demand.total, d.free(demand.stamp)) <= 1;
}

/**
 * Order every domain's children most packed first (highest share of their free
 * resources the tasks would take), ties by id, down to `maxDepthLevel` (whose own
 * children are still sorted), as KAI's sortTree does. Mutates the tree on purpose:
 * the order is what later calls and the domain list read.
 */
export function sortForPacking(d: Domain, demand: CallDemand, maxDepthLevel: string | null): void {
  if (!maxDepthLevel) return;
  if (d.children.length > 1) {
    const ratio = new Map<Domain, number>();
    for (const c of d.children) ratio.set(c, ratioToFree(demand.total, c.free(demand.stamp)));
    d.children.sort((a, b) => {
      const ra = ratio.get(a)!;
      const rb = ratio.get(b)!;
      if (ra !== rb) return rb > ra ? 1 : -1;
      return compareIds(a.id, b.id);
    });
  }
  if (d.level === maxDepthLevel) return;
  for (const c of d.children) sortForPacking(c, demand, maxDepthLevel);
}
