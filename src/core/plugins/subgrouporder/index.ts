// subgrouporder: pod sets below their minimum first; among satisfied ones, the lower
// placed/minimum ratio first.
import type { PodSet } from "../../api/podgroup-info.js";
import type { Plugin } from "../../framework/session.js";

export const name = "subgrouporder";

export function comparePodSets(l: PodSet, r: PodSet): number {
  const ls = l.activeAllocated >= l.minAvailable;
  const rs = r.activeAllocated >= r.minAvailable;
  if (!ls && !rs) return 0;
  if (!ls) return -1;
  if (!rs) return 1;
  const lr = l.activeAllocated / l.minAvailable;
  const rr = r.activeAllocated / r.minAvailable;
  return lr < rr ? -1 : rr < lr ? 1 : 0;
}

export function create(): Plugin {
  return {
    name,
    onSessionOpen(ssn) {
      ssn.podSetOrderFns.push(comparePodSets);
    },
  };
}
