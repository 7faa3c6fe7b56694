// Tombstones are kept for a while only: pruning them moves the horizon below which a cache's
// cursor no longer sees every deletion (such a cache loads its cluster in full).
import type { PrismaClient } from "../db.js";

/** Deletes the tombstones older than `olderThanMs` and raises the horizon past them. */
export async function pruneChangeTombstones(prisma: PrismaClient, olderThanMs: number): Promise<number> {
  const [row] = await prisma.$queryRawUnsafe<{ n: number }[]>(
    `WITH gone AS (
       DELETE FROM change_tombstone WHERE at < now() - $1::float8 * interval '1 millisecond' RETURNING change_xid
     ), newest AS (SELECT change_xid FROM gone ORDER BY change_xid DESC LIMIT 1),
     raised AS (
       UPDATE change_horizon h SET pruned_xid = GREATEST(h.pruned_xid, newest.change_xid) FROM newest
       WHERE h.id = 1 RETURNING 1
     )
     SELECT (SELECT count(*) FROM gone)::int AS n, (SELECT count(*) FROM raised)::int AS r`,
    olderThanMs,
  );
  return row?.n ?? 0;
}
