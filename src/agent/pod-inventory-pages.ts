// The complete set of a cluster's pods, cut into pages for reportPodInventory. Pods are
// ordered by (job id, pod name) in code-unit order (the API compares in the same order),
// and each page covers the key range from the previous page's last pod (exclusive) to its
// own last pod (inclusive); the first page starts at the beginning and the last runs to the
// end, so together the pages cover every key and each one is complete for its range.
import type { PodRef } from "./backends/types.js";

export const INVENTORY_PAGE_SIZE = 5000;

export interface InventoryPage {
  pods: PodRef[];
  /** null = from the first key. */
  after: PodRef | null;
  /** null = to the last key. */
  through: PodRef | null;
}

export function compareRefs(a: PodRef, b: PodRef): number {
  if (a.jobId !== b.jobId) return a.jobId < b.jobId ? -1 : 1;
  if (a.pod !== b.pod) return a.pod < b.pod ? -1 : 1;
  return 0;
}

export function inventoryPages(pods: readonly PodRef[], size = INVENTORY_PAGE_SIZE): InventoryPage[] {
  const sorted = [...pods]
    .sort(compareRefs)
    .filter((ref, i, all) => i === 0 || compareRefs(all[i - 1]!, ref) !== 0);
  const pages: InventoryPage[] = [];
  let after: PodRef | null = null;
  for (let start = 0; start === 0 || start < sorted.length; start += size) {
    const slice = sorted.slice(start, start + size);
    const last = start + size >= sorted.length;
    const through = last ? null : slice.at(-1)!;
    pages.push({ pods: slice, after, through });
    after = through;
  }
  return pages;
}
