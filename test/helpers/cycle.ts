// One scheduling cycle of a cluster the way the workers run it — load the snapshot, run the real
// core, commit — for tests that need placements to happen.
import {
  defaultPluginRegistry,
  defaultSchedulerConfig,
  runSession,
  type SchedulerConfig,
} from "../../src/core/index.js";
import { commitSession, type CommitResult } from "../../src/store/operations/commit-session.js";
import { loadSnapshot } from "../../src/store/snapshot/load-snapshot.js";
import type { Store } from "../../src/store/store.js";

/** The core's defaults with the allocate action only, and only plugins its registry has (the core
 * is being completed in parallel: with every plugin registered, the filter keeps them all). */
export function allocateOnlyConfig(): SchedulerConfig {
  const registry = defaultPluginRegistry();
  const config = defaultSchedulerConfig();
  return {
    ...config,
    actions: ["allocate"],
    tiers: config.tiers.map((tier) => ({ plugins: tier.plugins.filter((p) => registry.has(p.name)) })),
  };
}

export async function runCycle(
  store: Store,
  cluster: string,
  config = allocateOnlyConfig(),
): Promise<CommitResult> {
  const { snapshot, generation } = await loadSnapshot(store.prisma, cluster);
  return commitSession(store, cluster, generation, runSession(snapshot, config));
}
