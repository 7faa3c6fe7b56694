// When a cycle may skip loading its snapshot: the cluster's generation is where this process's
// last cycle left it, and either the cycle was asked for by agent reports that moved nothing
// (pods confirmed running), or it is a timer's and the last cycle found the cluster quiet —
// nothing waiting, no gang below its minimum — and nothing waits now either (new jobs do not
// move the generation). A quiet cluster still gets a full cycle every FULL_CYCLE_EVERY_MS.
import { clusterGeneration, hasPendingPods, type Store } from "../../src/store/index.js";
import { REPORT_TRIGGER } from "../triggers.js";

export const FULL_CYCLE_EVERY_MS = 30_000;

export interface ClusterMemory {
  /** The generation the last cycle of this process left the cluster at. */
  generation: number;
  /** When that cycle found the cluster quiet (null: it was not). */
  quietAt: number | null;
}

export async function canSkip(
  store: Store,
  memory: ReadonlyMap<string, ClusterMemory>,
  cluster: string,
  reason: string,
  now = Date.now(),
): Promise<boolean> {
  const seen = memory.get(cluster);
  if (!seen || (reason !== REPORT_TRIGGER && reason !== "timer")) return false;
  if ((await clusterGeneration(store.prisma, cluster)) !== seen.generation) return false;
  if (reason === REPORT_TRIGGER) return true;
  return (
    seen.quietAt !== null &&
    now - seen.quietAt < FULL_CYCLE_EVERY_MS &&
    !(await hasPendingPods(store.prisma, cluster))
  );
}
