// What runCycle needs, as a worker process holds it, for tests that run the workers' cycle
// function directly: a process's own cache, cycle memory, carries and search cursors.
import type { Redis } from "ioredis";
import { pino } from "pino";
import { defaultSchedulerConfig } from "../../src/core/index.js";
import { ClusterCache, type Store } from "../../src/store/index.js";
import type { CycleDeps } from "../../workers/cycle/run-cycle.js";
import { SearchCursorStore } from "../../workers/cycle/search-cursor-store.js";
import type { BindDispatcher } from "../../workers/dispatch/bind-dispatcher.js";

const silent = pino({ level: "silent" });

/** `redis` and `prefix`: where the search cursors are kept; `extra` replaces any default. */
export function testCycleDeps(
  o: { store: Store; dispatcher: BindDispatcher; redis: Redis; prefix: string },
  extra: Partial<CycleDeps> = {},
): CycleDeps {
  return {
    store: o.store,
    config: defaultSchedulerConfig(),
    dispatcher: o.dispatcher,
    usageWindow: null,
    backoff: { baseMs: 5_000, maxMs: 20_000 },
    staleRetries: 3,
    maxPlacements: 0,
    logIdleCycles: false,
    workerId: "test",
    log: silent,
    cache: new ClusterCache(o.store),
    memory: new Map(),
    carries: new Map(),
    searchCursors: new SearchCursorStore(o.redis, o.prefix, silent),
    ...extra,
  };
}
