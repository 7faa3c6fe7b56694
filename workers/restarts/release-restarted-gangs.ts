// The workers' restart check (store: releaseRestartHolds): restarted gangs whose previous attempt
// has stopped and whose backoff has passed may be placed again; the caller triggers their
// clusters' cycles.
import type { Logger } from "pino";
import { type ReleasedHolds, releaseRestartHolds, type Store } from "../../src/store/index.js";

const CHECKER = { name: "restart-check" };

export async function releaseRestartedGangs(
  store: Store,
  log: Logger,
  opts: { now?: Date } = {},
): Promise<ReleasedHolds> {
  const released = await releaseRestartHolds(store, CHECKER, opts);
  if (released.jobs) log.info(released, "restarted gangs may be placed again");
  return released;
}
