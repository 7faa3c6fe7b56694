// Cluster ownership: which worker runs each cluster's scheduling cycles. A worker keeps a row of
// its own alive (heartbeat) and a lease per cluster it owns; both expire on the database's clock
// unless renewed, so a killed worker's clusters are free once its leases lapse. Every change of a
// cluster's owner grows the lease's epoch, and a cycle's commit carries the epoch it was planned
// under (commitSession's `lease`): a worker that lost the lease can no longer commit there.
import { prismaOf } from "../client.js";
import type { Tx } from "../db.js";
import { LeaseLostError } from "../errors.js";
import type { Store } from "../store.js";

/** A lease a worker holds: the epoch its commits must carry. */
export interface HeldLease {
  cluster: string;
  epoch: number;
}

/** What a worker needs to decide which clusters to take or give up. */
export interface OwnershipView {
  /** Live workers (heartbeat not expired), by id. */
  workers: string[];
  /** Every cluster with its current owner (null: none, or the lease lapsed). */
  clusters: { name: string; owner: string | null }[];
}

/** The owner of each cluster whose lease is live (API reads, metrics). */
export async function clusterOwners(store: Store): Promise<Map<string, { owner: string; since: Date }>> {
  const rows = await prismaOf(store).$queryRaw<{ cluster: string; owner: string; since: Date }[]>`
    SELECT cluster_name AS cluster, owner, acquired_at AS since FROM cluster_lease
    WHERE owner IS NOT NULL AND expires_at > now()`;
  return new Map(rows.map((r) => [r.cluster, { owner: r.owner, since: r.since }]));
}

/**
 * The worker's heartbeat: its row lives `leaseMs` more, and so does every lease it still holds.
 * Returns the leases held (a lease that lapsed before this renewal is not among them: another
 * worker may have it by now).
 */
export async function renewWorkerLeases(store: Store, worker: string, leaseMs: number): Promise<HeldLease[]> {
  return prismaOf(store).$transaction(async (tx) => {
    await tx.$executeRaw`
      INSERT INTO worker (id, expires_at) VALUES (${worker}, now() + ${leaseMs} * interval '1 millisecond')
      ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at`;
    const rows = await tx.$queryRaw<{ cluster: string; epoch: bigint }[]>`
      UPDATE cluster_lease SET expires_at = now() + ${leaseMs} * interval '1 millisecond'
      WHERE owner = ${worker} AND expires_at > now()
      RETURNING cluster_name AS cluster, epoch`;
    return rows.map((r) => ({ cluster: r.cluster, epoch: Number(r.epoch) }));
  });
}

/** Live workers and every cluster's live owner, read at one point in time. */
export async function ownershipView(store: Store): Promise<OwnershipView> {
  const [workers, clusters] = await prismaOf(store).$transaction(
    async (tx) => {
      const w = await tx.$queryRaw<{ id: string }[]>`
        SELECT id FROM worker WHERE expires_at > now() ORDER BY id`;
      const c = await tx.$queryRaw<{ name: string; owner: string | null }[]>`
        SELECT c.name, CASE WHEN l.expires_at > now() THEN l.owner END AS owner
        FROM cluster c LEFT JOIN cluster_lease l ON l.cluster_name = c.name ORDER BY c.name`;
      return [w, c] as const;
    },
    { isolationLevel: "RepeatableRead" },
  );
  return { workers: workers.map((w) => w.id), clusters };
}

/**
 * Takes the leases of these clusters that nobody holds (never held, released, or lapsed), each
 * with a new epoch; returns those taken. A cluster another worker holds is left alone.
 */
export async function acquireClusterLeases(
  store: Store,
  worker: string,
  clusters: readonly string[],
  leaseMs: number,
): Promise<HeldLease[]> {
  if (!clusters.length) return [];
  const rows = await prismaOf(store).$queryRaw<{ cluster: string; epoch: bigint }[]>`
    INSERT INTO cluster_lease AS l (cluster_name, owner, epoch, acquired_at, expires_at)
    SELECT c.name, ${worker}, 1, now(), now() + ${leaseMs} * interval '1 millisecond'
    FROM cluster c WHERE c.name = ANY(${clusters as string[]}::text[])
    ON CONFLICT (cluster_name) DO UPDATE
      SET owner = excluded.owner, epoch = l.epoch + 1, acquired_at = now(), expires_at = excluded.expires_at
      WHERE l.owner IS NULL OR l.expires_at IS NULL OR l.expires_at <= now()
    RETURNING l.cluster_name AS cluster, l.epoch`;
  return rows.map((r) => ({ cluster: r.cluster, epoch: Number(r.epoch) }));
}

/** Gives these clusters' leases up (those the worker still holds), for others to take at once. */
export async function releaseClusterLeases(
  store: Store,
  worker: string,
  clusters: readonly string[],
): Promise<string[]> {
  if (!clusters.length) return [];
  const rows = await prismaOf(store).$queryRaw<{ cluster: string }[]>`
    UPDATE cluster_lease SET owner = NULL, expires_at = NULL
    WHERE owner = ${worker} AND cluster_name = ANY(${clusters as string[]}::text[])
    RETURNING cluster_name AS cluster`;
  return rows.map((r) => r.cluster);
}

/** The worker leaves: its row goes, and every lease it holds is released. */
export async function leaveWorkers(store: Store, worker: string): Promise<void> {
  await prismaOf(store).$transaction(async (tx) => {
    await tx.$executeRaw`UPDATE cluster_lease SET owner = NULL, expires_at = NULL WHERE owner = ${worker}`;
    await tx.$executeRaw`DELETE FROM worker WHERE id = ${worker}`;
    // Rows of workers long gone (killed) are of no use to anyone.
    await tx.$executeRaw`DELETE FROM worker WHERE expires_at < now() - interval '1 day'`;
  });
}

/**
 * Inside a commit, with the cluster row locked: the lease must be the worker's, of this epoch, and
 * live; else LeaseLostError. The lease row is held (FOR SHARE) to the commit's end, so a takeover
 * waits for a commit already under way and the next owner's view includes it.
 */
export async function checkLease(
  tx: Tx,
  cluster: string,
  lease: { owner: string; epoch: number },
): Promise<void> {
  const rows = await tx.$queryRaw<{ owner: string | null; epoch: bigint; live: boolean }[]>`
    SELECT owner, epoch, coalesce(expires_at > now(), false) AS live
    FROM cluster_lease WHERE cluster_name = ${cluster} FOR SHARE`;
  const row = rows[0];
  if (!row || row.owner !== lease.owner || Number(row.epoch) !== lease.epoch || !row.live) {
    throw new LeaseLostError(
      cluster,
      lease.owner,
      lease.epoch,
      row?.owner ?? null,
      row ? Number(row.epoch) : null,
    );
  }
}
