// Exponential backoff with jitter, and an abortable sleep: every retry loop of the agent
// (API, Redis-facing reporting, Kubernetes calls, watches) waits through these.

export interface BackoffPolicy {
  initialMs: number;
  maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { initialMs: 200, maxMs: 10_000 };

/** Delay before retry number `attempt` (0-based): doubling, capped, with ±25% jitter so
 * many agents do not retry in lockstep after a shared outage. */
export function backoffDelay(attempt: number, policy: BackoffPolicy = DEFAULT_BACKOFF): number {
  const base = Math.min(policy.maxMs, policy.initialMs * 2 ** Math.min(attempt, 30));
  return Math.round(base * (0.75 + Math.random() * 0.5));
}

/** Resolves after `ms`, or early (without throwing) when the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
