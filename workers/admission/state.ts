// What a worker keeps between admission passes: each candidate cluster's base (rebuilt only when
// its cache says the cluster changed) and the jobs a pass could send nowhere. A pass then looks
// only at jobs it has not decided yet, unless some cluster changed in a way that can make room —
// and does nothing at all when there are none.
import type { SchedulerConfig, Snapshot } from "../../src/core/index.js";
import {
  admissionSnapshot,
  type ClusterSummary,
  type Store,
  type UsageWindow,
} from "../../src/store/index.js";
import { ClusterBase } from "./cluster-view.js";

/** A consistent view of one cluster, and whether anything in it changed since the last refresh. */
export interface ClusterRefresh {
  snapshot: Snapshot;
  generation: number;
  unchanged: boolean;
}

/** Where cluster snapshots come from (the worker's cluster cache, or a full read each time). */
export interface ClusterSource {
  refresh(cluster: string, opts: { now: number; usage?: UsageWindow }): Promise<ClusterRefresh>;
  /** Of these clusters, those surely unchanged since their last refresh (one read for all; the
   * cluster cache's), when the source can tell without refreshing each. */
  unchangedSinceRefresh?(clusters: readonly string[]): Promise<ReadonlySet<string>>;
}

/** Reads each cluster in full on every refresh (never `unchanged`): for a worker with no cache. */
export const fullReads = (store: Store): ClusterSource => ({
  refresh: async (cluster, opts) => ({
    ...(await admissionSnapshot(store, cluster, opts)),
    unchanged: false,
  }),
});

export class AdmissionState {
  /** Per candidate cluster (ready, not cordoned), its base as of the last pass. */
  readonly bases = new Map<string, ClusterBase>();
  /** Jobs a pass could send nowhere, with no cluster change since that can make room. */
  readonly unplaced = new Set<string>();

  constructor(readonly source: ClusterSource) {}

  /**
   * Brings every candidate cluster's base up to date. Forgets the unplaced jobs when a cluster
   * may have room it did not have (or became a candidate): they are looked at again.
   */
  async refresh(
    clusters: readonly ClusterSummary[],
    config: SchedulerConfig,
    opts: { now: number; usage?: UsageWindow },
  ): Promise<void> {
    let moreRoom = false;
    const candidates = clusters.filter((s) => s.ready && !s.cordoned);
    const names = new Set(candidates.map((s) => s.name));
    for (const name of this.bases.keys()) if (!names.has(name)) this.bases.delete(name);
    // One read tells which clusters with a base changed (with no usage window: usage changes
    // with time); only those are refreshed, their reads going out together.
    const kept = candidates.filter((s) => {
      const before = this.bases.get(s.name);
      return before !== undefined && sameSummary(before, s);
    });
    const unchanged =
      kept.length && !opts.usage && this.source.unchangedSinceRefresh
        ? await this.source.unchangedSinceRefresh(kept.map((s) => s.name))
        : new Set<string>();
    const stale = candidates.filter((s) => !unchanged.has(s.name));
    const refreshed = await Promise.all(stale.map((s) => this.source.refresh(s.name, opts)));
    for (const [i, s] of stale.entries()) {
      const before = this.bases.get(s.name);
      const r = refreshed[i]!;
      if (before && r.unchanged && sameSummary(before, s)) continue;
      const base = new ClusterBase(s, r.snapshot, config);
      if (!before || base.mayHaveMoreRoomThan(before)) moreRoom = true;
      if (before) base.keepEmptyFits(before);
      this.bases.set(s.name, base);
    }
    if (moreRoom) this.unplaced.clear();
  }
}

const sameSummary = (b: ClusterBase, s: ClusterSummary) =>
  JSON.stringify(b.labels) === JSON.stringify(s.labels) &&
  JSON.stringify(b.podPolicy) === JSON.stringify(s.podPolicy);
