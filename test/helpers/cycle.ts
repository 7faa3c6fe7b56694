// One scheduling cycle of a cluster the way the workers run it — load the snapshot, run the real
// core with its default configuration, commit — for tests that need placements to happen.
import { defaultSchedulerConfig, runSession, type SchedulerConfig } from "../../src/core/index.js";
import { type CommitResult, commitSession } from "../../src/store/operations/commit-session.js";
import { loadSnapshot } from "../../src/store/snapshot/load-snapshot.js";
import type { Store } from "../../src/store/store.js";

export async function runCycle(
  store: Store,
  cluster: string,
  config: SchedulerConfig = defaultSchedulerConfig(),
): Promise<CommitResult> {
  const { snapshot, generation, rows } = await loadSnapshot(store, cluster);
  return commitSession(store, cluster, generation, runSession(snapshot, config), rows);
}
