// What the fair-share view is computed from (by its callers, with the core's proportion plugin):
// each cluster's current snapshot and its queues' recent usage.
import { prismaOf } from "../client.js";
import type { QuotaVector, Snapshot } from "../../core/index.js";
import type { UsageWindow } from "../domain/usage.js";
import { NotFoundError } from "../errors.js";
import { loadSnapshot } from "../snapshot/load-snapshot.js";
import type { Store } from "../store.js";
import { recentUsage, usageKey } from "./usage.js";

export interface FairShareInput {
  cluster: string;
  snapshot: Snapshot;
  /** Queue → decayed recent usage on the cluster; queues without history are absent. */
  usage: Map<string, QuotaVector>;
}

/** Every cluster's (or one cluster's) fair-share input, by cluster name, one at a time: a
 * caller done with one cluster's snapshot need not hold it while the next is read. */
export async function* fairShareInputs(
  store: Store,
  opts: {
    cluster?: string | null;
    now?: Date;
    /** Time-based fair share as the workers run it (their usage window); absent = plain fair share. */
    usageWindow?: UsageWindow | null;
  } = {},
): AsyncGenerator<FairShareInput> {
  const now = opts.now ?? new Date();
  let clusters: string[];
  if (opts.cluster) {
    if (
      !(await prismaOf(store).cluster.findUnique({ where: { name: opts.cluster }, select: { name: true } }))
    ) {
      throw new NotFoundError("cluster", opts.cluster, "cluster");
    }
    clusters = [opts.cluster];
  } else {
    clusters = (
      await prismaOf(store).cluster.findMany({ select: { name: true }, orderBy: { name: "asc" } })
    ).map((c) => c.name);
  }
  const usage = await recentUsage(prismaOf(store), now, clusters);
  for (const cluster of clusters) {
    const { snapshot } = await loadSnapshot(store, cluster, {
      now: now.getTime(),
      usage: opts.usageWindow ?? undefined,
    });
    const ofCluster = new Map<string, QuotaVector>();
    for (const q of snapshot.queues) {
      const u = usage.get(usageKey(q.name, cluster));
      if (u) ofCluster.set(q.name, u);
    }
    yield { cluster, snapshot, usage: ofCluster };
  }
}
