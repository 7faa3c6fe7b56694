// `fleetq serve` and `fleetq dev`: the API's per-token limits from the environment
// (src/api/rate-limit.ts; defaults in DEFAULT_RATE_LIMITS):
//   FLEETQ_API_RATE (cost points a token gets back per second; 0 = no cost limit),
//   FLEETQ_API_BURST (the size of its bucket, at least the cost limit of one query),
//   FLEETQ_API_CONCURRENCY (its operations in flight; 0 = no cap),
//   FLEETQ_API_WS_CONNECTIONS (its WebSocket connections open at once; 0 = no cap) for MEMBER and VIEWER tokens,
//   and the same for ADMIN tokens (FLEETQ_API_ADMIN_RATE, FLEETQ_API_ADMIN_BURST,
//   FLEETQ_API_ADMIN_CONCURRENCY) and AGENT tokens (FLEETQ_API_AGENT_RATE, …).
import { MAX_QUERY_COST } from "../api/query-cost.js";
import {
  DEFAULT_RATE_LIMITS,
  DEFAULT_WS_CONNECTIONS,
  type RateLimits,
  type TokenBudget,
} from "../api/rate-limit.js";
import { numberEnv } from "./env.js";
import { CliError } from "./exit-codes.js";

function budgetFromEnv(prefix: string, defaults: TokenBudget, env: NodeJS.ProcessEnv): TokenBudget {
  const read = (name: string, fallback: number) => {
    const v = numberEnv(`${prefix}_${name}`, env) ?? fallback;
    if (v < 0) throw new CliError(`${prefix}_${name} must be 0 or more (got ${v})`);
    return v;
  };
  const budget = {
    perSecond: read("RATE", defaults.perSecond),
    burst: read("BURST", defaults.burst),
    concurrent: Math.floor(read("CONCURRENCY", defaults.concurrent)),
    connections: Math.floor(read("WS_CONNECTIONS", defaults.connections ?? DEFAULT_WS_CONNECTIONS)),
  };
  if (budget.perSecond > 0 && budget.burst < MAX_QUERY_COST)
    throw new CliError(
      `${prefix}_BURST must be at least ${MAX_QUERY_COST}, the cost limit of one query (got ${budget.burst})`,
    );
  return budget;
}

export function rateLimitsFromEnv(env: NodeJS.ProcessEnv = process.env): RateLimits {
  return {
    user: budgetFromEnv("FLEETQ_API", DEFAULT_RATE_LIMITS.user, env),
    admin: budgetFromEnv("FLEETQ_API_ADMIN", DEFAULT_RATE_LIMITS.admin, env),
    agent: budgetFromEnv("FLEETQ_API_AGENT", DEFAULT_RATE_LIMITS.agent, env),
  };
}
