// Changes to the queue tree's shape (create, move, delete) are serialised by one transaction-scoped
// advisory lock: two concurrent moves could otherwise each pass the cycle check and close a loop.
import type { Tx } from "../db.js";

const QUEUE_TREE_LOCK = 0x666c7471; // "fltq"

export async function lockQueueTree(tx: Tx): Promise<void> {
  await tx.$queryRaw`SELECT pg_advisory_xact_lock(${QUEUE_TREE_LOCK})::text`;
}
