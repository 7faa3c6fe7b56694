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
    // The reads go out together (each is a few small queries when little changed).
    const refreshed = await Promise.all(candidates.map((s) => this.source.refresh(s.name, opts)));
    for (const [i, s] of candidates.entries()) {
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
  JSON.stringify(b.labels) === JSON.stringify(s.labels);
