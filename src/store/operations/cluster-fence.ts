// The fencing counter of a cluster. Every operation that changes what the scheduler of a cluster
// would see about resources in use (node inventory, pod phases, placements, cancellations, cordon)
// locks the cluster row, does its work and bumps the generation, so a session result computed
// on an older snapshot can never be committed over it.
import type { Tx } from "../db.js";

/** Locks the cluster row for the rest of the transaction; null when the cluster does not exist. */
export async function lockCluster(tx: Tx, cluster: string): Promise<{ generation: number } | null> {
  const rows = await tx.$queryRaw<{ generation: bigint }[]>`
    SELECT generation FROM cluster WHERE name = ${cluster} FOR UPDATE`;
  const row = rows[0];
  return row ? { generation: Number(row.generation) } : null;
}

/** Call with the row locked (lockCluster). Returns the new generation. */
export async function bumpGeneration(tx: Tx, cluster: string): Promise<number> {
  const rows = await tx.$queryRaw<{ generation: bigint }[]>`
    UPDATE cluster SET generation = generation + 1 WHERE name = ${cluster} RETURNING generation`;
  return Number(rows[0]!.generation);
}
