// Defaults every part of fleetq agrees on (servers, workers, agents, the CLI).

/** Redis when REDIS_URL (agents: FLEETQ_REDIS_URL) is not set. */
export const DEFAULT_REDIS_URL = "redis://127.0.0.1:6379";
