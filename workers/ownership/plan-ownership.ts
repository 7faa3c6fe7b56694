// Which clusters a worker should take or give up, from one look at the live workers and the
// clusters' owners: each worker's share is the number of clusters over the number of workers
// (the first ones by id take one more when it does not divide), so clusters spread evenly and
// the shares add up to every cluster. Which clusters: each worker prefers those that hash highest
// with its id (rendezvous hashing), so workers reach for different clusters and a cluster tends
// to return to the same worker.
import type { OwnershipView } from "../../src/store/index.js";

export interface OwnershipPlan {
  /** Clusters nobody holds, to take (at most the worker's shortfall). */
  acquire: string[];
  /** Clusters held beyond the worker's share, to give up. */
  release: string[];
  /** How many clusters the worker should hold. */
  share: number;
}

/** The number of clusters each worker should hold, by worker id. */
export function shareOf(worker: string, workers: readonly string[], clusters: number): number {
  const live = [...new Set([...workers, worker])].sort();
  const i = live.indexOf(worker);
  return Math.floor(clusters / live.length) + (i < clusters % live.length ? 1 : 0);
}

export function planOwnership(worker: string, view: OwnershipView, held: ReadonlySet<string>): OwnershipPlan {
  const names = new Set(view.clusters.map((c) => c.name));
  const mine = [...held].filter((c) => names.has(c));
  const share = shareOf(worker, view.workers, view.clusters.length);
  const byPreference = (a: string, b: string) =>
    preference(worker, b) - preference(worker, a) || a.localeCompare(b);
  if (mine.length > share) {
    const release = mine.sort(byPreference).slice(share);
    return { acquire: [], release, share };
  }
  const free = view.clusters.filter((c) => c.owner === null && !held.has(c.name)).map((c) => c.name);
  return { acquire: free.sort(byPreference).slice(0, share - mine.length), release: [], share };
}

/** FNV-1a of worker and cluster: a stable pseudo-random preference. */
export function preference(worker: string, cluster: string): number {
  let h = 0x811c9dc5;
  const s = `${worker}\u0000${cluster}`;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}
