// What every resolver gets: the store, the event bus, who is asking, and per-request loaders.
import type { SchedulerConfig } from "../core/index.js";
import type { Principal, RedisEventBus, Store, UsageWindow } from "../store/index.js";
import { createLoaders, type Loaders } from "./context-loaders.js";
import type { AgentLogs } from "./agent-logs.js";
import type { DryRuns } from "./dry-runs.js";
import type { FairShareCache } from "./fair-share-cache.js";
import type { AuthRefusal, PrincipalCache } from "./principal-cache.js";

export interface ApiContext {
  store: Store;
  bus: RedisEventBus;
  /** Remembered authentications; cleared when a token is revoked. */
  principals: PrincipalCache;
  principal: Principal | null;
  /** Why a bearer gave no principal (an invalid JWT, a person without role binding). */
  authRefusal?: AuthRefusal | null;
  loaders: Loaders;
  /** The scheduler configuration fair shares are computed with (its proportion plugin). */
  schedulerConfig?: SchedulerConfig;
  /** The workers' time-based fair-share window, if they use one. */
  usageWindow?: UsageWindow | null;
  /** fairShare, computed once for concurrent asks and kept briefly. */
  fairShares: FairShareCache;
  /** Dry runs of submissions (what admission and the clusters' cycles would do). */
  dryRuns: DryRuns;
  /** Pod logs through the clusters' agents. */
  logs: AgentLogs;
  /** The secret BindRequests are signed with (agentBindKey derives each cluster's key). */
  bindSecret: string;
}

export interface ContextDeps {
  store: Store;
  bus: RedisEventBus;
  principals: PrincipalCache;
  schedulerConfig?: SchedulerConfig;
  usageWindow?: UsageWindow | null;
  fairShares: FairShareCache;
  dryRuns: DryRuns;
  logs: AgentLogs;
  bindSecret: string;
}

export function createContext(
  deps: ContextDeps,
  principal: Principal | null,
  authRefusal: AuthRefusal | null = null,
): ApiContext {
  return { ...deps, principal, authRefusal, loaders: createLoaders(deps.store) };
}

/** The secret of an `Authorization: Bearer <secret>` value. */
export function bearerSecret(header: unknown): string | null {
  if (typeof header !== "string") return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1]! : null;
}
