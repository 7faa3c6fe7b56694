// What a worker keeps between admission passes: each candidate cluster's base (rebuilt only when
// the cluster changed) and the jobs a pass could send nowhere. A pass then looks only at jobs it
// has not decided yet, unless some cluster changed in a way that can make room — and does nothing
// at all when there are none. Bases are built from digests (cluster-digest.ts): on a fleet, the
// clusters' owners compute them from their caches (owner-digests.ts); here, from a source of
// snapshots read in this process.
import type { SchedulerConfig, Snapshot } from "../../src/core/index.js";
import { loadSnapshot, type ClusterSummary, type Store, type UsageWindow } from "../../src/store/index.js";
import { type ClusterDigest, digestCluster } from "./cluster-digest.js";
import { ClusterBase } from "./cluster-view.js";

/** A consistent view of one cluster, and whether anything in it changed since the last refresh. */
export interface ClusterRefresh {
  snapshot: Snapshot;
  generation: number;
  unchanged: boolean;
}

/** Where cluster snapshots come from (a cluster cache, or a full read each time). */
export interface ClusterSource {
  refresh(cluster: string, opts: { now: number; usage?: UsageWindow }): Promise<ClusterRefresh>;
  /** Of these clusters, those surely unchanged since their last refresh (one read for all; the
   * cluster cache's), when the source can tell without refreshing each. */
  unchangedSinceRefresh?(clusters: readonly string[]): Promise<ReadonlySet<string>>;
}

/** A cluster's digest as of now, or null when the one of token `known` still holds. */
export interface DigestAnswer {
  token: string;
  digest: ClusterDigest | null;
}

export interface DigestRequest {
  now: number;
  usage?: UsageWindow;
  config: SchedulerConfig;
}

/** Where digests come from. `known`: per cluster, the token of the digest the caller holds. A
 * cluster missing from the answer could not be had now. */
export interface DigestSource {
  digests(
    clusters: readonly string[],
    known: ReadonlyMap<string, string>,
    req: DigestRequest,
  ): Promise<Map<string, DigestAnswer>>;
}

/** Reads each cluster in full on every refresh (never `unchanged`): for a worker with no cache. */
export const fullReads = (store: Store): ClusterSource => ({
  refresh: async (cluster, opts) => ({
    ...(await loadSnapshot(store, cluster, opts)),
    unchanged: false,
  }),
});

/** Digests computed here from a source of snapshots. */
export function localDigests(source: ClusterSource): DigestSource {
  let made = 0;
  return {
    async digests(clusters, known, req) {
      // One read tells which clusters with a digest changed (with no usage window: usage changes
      // with time); only those are refreshed, their reads going out together.
      const held = clusters.filter((c) => known.has(c));
      const unchanged =
        held.length && !req.usage && source.unchangedSinceRefresh
          ? await source.unchangedSinceRefresh(held)
          : new Set<string>();
      const out = new Map<string, DigestAnswer>();
      for (const c of unchanged) out.set(c, { token: known.get(c)!, digest: null });
      const stale = clusters.filter((c) => !unchanged.has(c));
      const refreshed = await Promise.all(stale.map((c) => source.refresh(c, req)));
      for (const [i, c] of stale.entries()) {
        const r = refreshed[i]!;
        out.set(
          c,
          r.unchanged && known.has(c)
            ? { token: known.get(c)!, digest: null }
            : { token: `local:${++made}`, digest: digestCluster(r.snapshot, req.config) },
        );
      }
      return out;
    },
  };
}

const isDigestSource = (s: ClusterSource | DigestSource): s is DigestSource => "digests" in s;

export class AdmissionState {
  /** Per candidate cluster (ready, not cordoned), its base as of the last pass. */
  readonly bases = new Map<string, ClusterBase>();
  /** Jobs a pass could send nowhere, with no cluster change since that can make room. */
  readonly unplaced = new Set<string>();
  private readonly tokens = new Map<string, string>();
  readonly source: DigestSource;

  constructor(source: ClusterSource | DigestSource) {
    this.source = isDigestSource(source) ? source : localDigests(source);
  }

  /**
   * Brings every candidate cluster's base up to date. Forgets the unplaced jobs when a cluster
   * may have room it did not have (or became a candidate): they are looked at again. A cluster
   * whose digest cannot be had now keeps its base (none: it takes no jobs this pass).
   */
  async refresh(
    clusters: readonly ClusterSummary[],
    config: SchedulerConfig,
    opts: { now: number; usage?: UsageWindow },
  ): Promise<void> {
    let moreRoom = false;
    const candidates = clusters.filter((s) => s.ready && !s.cordoned);
    const names = new Set(candidates.map((s) => s.name));
    for (const name of this.bases.keys())
      if (!names.has(name)) {
        this.bases.delete(name);
        this.tokens.delete(name);
      }
    const known = new Map<string, string>();
    for (const s of candidates) {
      const before = this.bases.get(s.name);
      const token = this.tokens.get(s.name);
      if (before && token && sameSummary(before, s)) known.set(s.name, token);
    }
    const answers = await this.source.digests(
      candidates.map((s) => s.name),
      known,
      { ...opts, config },
    );
    for (const s of candidates) {
      const before = this.bases.get(s.name);
      const a = answers.get(s.name);
      if (!a?.digest) continue;
      this.tokens.set(s.name, a.token);
      const base = new ClusterBase(s, a.digest, config);
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
