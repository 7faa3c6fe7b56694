// Where a worker's tasks beside the cycles (estimates, usage history) read a cluster: the cycles'
// cache, refreshed as the cycles refresh it (with their usage window: another window would make
// every refresh a change for the cycles' skip check), or a full read when they run without one.
import {
  type ClusterCache,
  loadSnapshot,
  type LoadedSnapshot,
  type Store,
  type UsageWindow,
} from "../src/store/index.js";

export interface ClusterViews {
  cache: ClusterCache;
  /** The cycles' time-based fair share window (undefined: off). */
  usage: UsageWindow | undefined;
}

/** The cluster at `now`: from `views` when given, else read in full (with `usage` when given). */
export function clusterView(
  store: Store,
  cluster: string,
  now: number,
  views: ClusterViews | undefined,
  usage?: UsageWindow,
): Promise<LoadedSnapshot> {
  return views
    ? views.cache.refresh(cluster, { now, usage: views.usage })
    : loadSnapshot(store, cluster, { now, usage });
}
