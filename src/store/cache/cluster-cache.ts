// The workers' cluster cache: each cluster's snapshot rows kept in memory and brought up to date
// by reading only what changed since the last refresh (docs/worker-cache.md). The cursor is the
// xmin of the last read's snapshot: every transaction that read could not see has an id >= xmin,
// so rows it wrote carry change_xid >= cursor and the next delta reads them (some rows twice:
// harmless, they replace what they replace). A cluster is loaded in full when first seen, when
// its cursor is older than the tombstones kept or than maxIdleMs, and when a drift check finds
// counts that differ from the database's. PostgreSQL stays the truth: a cached snapshot may be
// stale, and the commit's generation fence refuses what was decided on it.
import { prismaOf } from "../client.js";
import { queueUsageFractions, usageFrom } from "../snapshot/queue-usage.js";
import type { QuotaVector } from "../../core/index.js";
import type { UsageBucket, UsageWindow } from "../domain/usage.js";
import { NotFoundError } from "../errors.js";
import { pruneChangeTombstones } from "../operations/change-tombstones.js";
import { ClusterState, type LoadedSnapshot } from "../snapshot/cluster-state.js";
import { readAll } from "../snapshot/load-snapshot.js";
import {
  type DeltaHead,
  type Query,
  type ReadPoint,
  readChangedClusters,
  readConsistent,
  readCounts,
  readDeltaHead,
  readJobs,
  readNodes,
  readPoint,
  readQueues,
  readUsage,
} from "../snapshot/read-rows.js";
import type { Store } from "../store.js";

export interface CachedCluster extends LoadedSnapshot {
  /** No row of the cluster (nor queue, quota or usage) changed since the previous refresh. */
  unchanged: boolean;
  /** Grows with every refresh that found a change (or loaded in full): two views of one cluster
   * with the same version were built from the same rows. */
  version: number;
}

export interface ClusterCacheOptions {
  /** Every this many delta refreshes of a cluster, its counts are compared with the database's
   * (a mismatch: full load). 0 = never. */
  driftCheckEvery?: number;
  /** A cluster not refreshed for this long is loaded in full. */
  maxIdleMs?: number;
  /** Tombstones older than this are pruned (at most every tenth of it, by any cache). */
  tombstoneRetentionMs?: number;
  /** Told when a delta refresh found changed rows and starts reading them (logs, tests). */
  onCatchUp?: (cluster: string, changes: { jobs: number; nodes: number; queues: boolean }) => void;
}

export interface RefreshOptions {
  now?: number;
  usage?: UsageWindow;
}

/** How the last refresh of a cluster went (metrics, tests). */
export type RefreshKind = "full" | "delta";

interface Entry {
  state: ClusterState;
  cursor: bigint;
  /** The snapshot of the read the entry is up to date with (whose writes it has seen). */
  seen: string;
  refreshedAt: number;
  deltas: number;
  usage: Map<string, QuotaVector> | null;
}

const DEFAULTS: Required<Omit<ClusterCacheOptions, "onCatchUp">> = {
  driftCheckEvery: 50,
  maxIdleMs: 10 * 60_000,
  tombstoneRetentionMs: 3600_000,
};

export class ClusterCache {
  private readonly entries = new Map<string, Entry>();
  private readonly busy = new Map<string, Promise<unknown>>();
  private readonly versions = new Map<string, number>();
  private readonly opts: Required<Omit<ClusterCacheOptions, "onCatchUp">> &
    Pick<ClusterCacheOptions, "onCatchUp">;
  private prunedAt = 0;
  /** Per cluster, how its last refresh went. */
  readonly lastRefresh = new Map<string, RefreshKind>();
  fullLoads = 0;

  constructor(
    private readonly store: Store,
    opts: ClusterCacheOptions = {},
  ) {
    this.opts = { ...DEFAULTS, ...opts };
  }

  /** Brings one cluster up to date and returns a consistent view of it. Refreshes of one cluster
   * run one after the other; the rows of a view stay valid until the cluster's next refresh. */
  refresh(cluster: string, opts: RefreshOptions = {}): Promise<CachedCluster> {
    return this.use(cluster, opts, async (view) => view);
  }

  /** Refreshes the cluster and runs `fn` on its view; the cluster's next refresh waits until `fn`
   * settles, so the view's rows stay as they are while `fn` plans and commits from them (`fn`
   * must not refresh the same cluster). */
  use<T>(cluster: string, opts: RefreshOptions, fn: (view: CachedCluster) => Promise<T>): Promise<T> {
    const previous = this.busy.get(cluster) ?? Promise.resolve();
    const next = previous.catch(() => {}).then(async () => fn(await this.bringUpToDate(cluster, opts)));
    this.busy.set(cluster, next);
    void next
      .finally(() => {
        if (this.busy.get(cluster) === next) this.busy.delete(cluster);
      })
      .catch(() => {});
    return next;
  }

  /**
   * Of these clusters, those held that surely did not change since their last refresh (no row of
   * theirs, nor queue or quota, written by a transaction that refresh could not see), found in
   * one statement for all: their cursors move to the read's point, and the view their last refresh
   * returned still holds. Never among them: a cluster not
   * held, or with a usage window (usage changes with time), or whose refresh would load it in full
   * or check its counts, or being refreshed now; its own refresh tells.
   */
  async unchangedSinceRefresh(clusters: readonly string[]): Promise<Set<string>> {
    const wallClock = Date.now();
    const asked = new Map<string, { entry: Entry; cursor: bigint }>();
    for (const name of clusters) {
      const entry = this.entries.get(name);
      if (!entry || entry.usage || this.busy.has(name)) continue;
      if (wallClock - entry.refreshedAt > this.opts.maxIdleMs) continue;
      if (this.opts.driftCheckEvery > 0 && (entry.deltas + 1) % this.opts.driftCheckEvery === 0) continue;
      asked.set(name, { entry, cursor: entry.cursor });
    }
    const out = new Set<string>();
    if (!asked.size) return out;
    const read = await readChangedClusters(
      prismaOf(this.store),
      [...asked].map(([name, a]) => ({ name, since: a.cursor, snapshot: a.entry.seen })),
    );
    if (!read) return out;
    const { point, found } = read;
    for (const [name, { entry, cursor }] of asked) {
      const f = found.get(name);
      if (!f?.cluster || f.changed || !entry.state.sameCluster(f.cluster)) continue;
      if (cursor <= point.prunedXid) continue;
      // A refresh that ran meanwhile moved the cursor or replaced the entry: it tells.
      if (this.entries.get(name) !== entry || entry.cursor !== cursor || this.busy.has(name)) continue;
      entry.cursor = point.cursor;
      entry.seen = point.snapshot;
      entry.refreshedAt = wallClock;
      entry.deltas++;
      out.add(name);
    }
    return out;
  }

  /** The version of the view the cluster's last refresh returned; undefined when not held. */
  versionOf(cluster: string): number | undefined {
    return this.entries.has(cluster) ? this.versions.get(cluster) : undefined;
  }

  /** Drops what is held of a cluster (the next refresh loads it in full). */
  forget(cluster: string): void {
    this.entries.delete(cluster);
  }

  private async bringUpToDate(cluster: string, opts: RefreshOptions): Promise<CachedCluster> {
    const now = opts.now ?? Date.now();
    const wallClock = Date.now();
    await this.pruneTombstones(wallClock);
    const held = this.entries.get(cluster);
    let outcome: { entry: Entry; changed: boolean; buckets: Map<string, UsageBucket[]> | null };
    try {
      outcome = await readConsistent(prismaOf(this.store), async (q) => {
        const full = async (point: ReadPoint) => {
          const entry: Entry = {
            state: new ClusterState(cluster),
            cursor: point.cursor,
            seen: point.snapshot,
            refreshedAt: wallClock,
            deltas: 0,
            usage: null,
          };
          const apply = await readAll(q, entry.state, now, opts.usage);
          return { entry, changed: true, buckets: apply() };
        };
        if (!held || wallClock - held.refreshedAt > this.opts.maxIdleMs) return full(await readPoint(q));
        // The read point, the cluster row and what changed, in the transaction's first statement.
        const head = await readDeltaHead(q, cluster, held.cursor, held.seen);
        if (held.cursor <= head.point.prunedXid) return full(head.point);
        const delta = await this.readDelta(q, held, head, opts.usage, now);
        if (!delta) return full(head.point);
        held.cursor = head.point.cursor;
        held.seen = head.point.snapshot;
        held.refreshedAt = wallClock;
        return { entry: held, ...delta };
      });
    } catch (err) {
      // A half-applied delta must not survive: the next refresh starts over.
      this.entries.delete(cluster);
      throw err;
    }
    const { entry, buckets } = outcome;
    let changed = outcome.changed;
    if (entry !== held) {
      this.fullLoads++;
      this.lastRefresh.set(cluster, "full");
    } else this.lastRefresh.set(cluster, "delta");
    this.entries.set(cluster, entry);
    let usage: Map<string, QuotaVector> | null = null;
    if (buckets && opts.usage) {
      usage = queueUsageFractions(buckets, entry.state.readyCapacity(), new Date(now), opts.usage);
      if (!sameUsage(usage, entry.usage)) changed = true;
    } else if (entry.usage) changed = true;
    entry.usage = usage;
    const version = (this.versions.get(cluster) ?? 0) + (changed ? 1 : 0);
    this.versions.set(cluster, version);
    return { ...entry.state.snapshot(now, usage), unchanged: !changed, version };
  }

  /** Reads and applies what changed since the entry's cursor; null when the entry has drifted
   * (the caller loads in full). Runs inside the read's transaction, applying as it goes: a
   * failure drops the entry. */
  private async readDelta(
    q: Query,
    entry: Entry,
    head: DeltaHead,
    usage: UsageWindow | undefined,
    now: number,
  ) {
    const { state } = entry;
    const { cluster, changes } = head;
    if (!cluster) throw new NotFoundError("cluster", state.cluster);
    if (changes.jobs.length || changes.nodes.length || changes.removedNodes.length || changes.queues)
      this.opts.onCatchUp?.(state.cluster, {
        jobs: changes.jobs.length,
        nodes: changes.nodes.length + changes.removedNodes.length,
        queues: changes.queues,
      });
    const addedNode = changes.nodes.some((n) => !state.hasNode(n));
    const nodes =
      changes.removedNodes.length || addedNode
        ? { all: await readNodes(q, state.cluster) }
        : { some: changes.nodes.length ? await readNodes(q, state.cluster, entry.cursor) : [] };
    const queues = changes.queues ? await readQueues(q, state.cluster) : null;
    const jobs = changes.jobs.length ? await readJobs(q, state.cluster, changes.jobs) : null;
    const buckets = usage ? await readUsage(q, state.cluster, usageFrom(now, usage)) : null;
    const drift = this.opts.driftCheckEvery > 0 && ++entry.deltas % this.opts.driftCheckEvery === 0;
    const counts = drift ? await readCounts(q, state.cluster) : null;

    let changed = state.setCluster(cluster);
    if ("all" in nodes && nodes.all) {
      state.setNodes(nodes.all);
      changed = true;
    } else if (nodes.some?.length && state.updateNodes(nodes.some)) changed = true;
    if (queues && state.setQueues(queues.queues, queues.quotas)) changed = true;
    if (jobs && state.updateJobs(changes.jobs, jobs)) changed = true;
    if (counts) {
      const held = state.counts();
      if (held.nodes !== counts.nodes || held.jobs !== counts.jobs || held.pods !== counts.pods) return null;
    }
    return { changed, buckets };
  }

  private async pruneTombstones(wallClock: number): Promise<void> {
    if (wallClock - this.prunedAt < this.opts.tombstoneRetentionMs / 10) return;
    this.prunedAt = wallClock;
    await pruneChangeTombstones(prismaOf(this.store), this.opts.tombstoneRetentionMs);
  }
}

function sameUsage(a: ReadonlyMap<string, QuotaVector>, b: ReadonlyMap<string, QuotaVector> | null): boolean {
  if (!b || a.size !== b.size) return false;
  for (const [queue, v] of a) {
    const w = b.get(queue);
    if (!w || w.gpu !== v.gpu || w.cpuMillis !== v.cpuMillis || w.memory !== v.memory) return false;
  }
  return true;
}
