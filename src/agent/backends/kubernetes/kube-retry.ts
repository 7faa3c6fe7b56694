// Calls to the Kubernetes API retried through throttling and server or network failures,
// for up to a deadline; the final error is thrown for the caller to report.
import type { Logger } from "pino";
import { backoffDelay, sleep, type BackoffPolicy } from "../../backoff.js";
import { isRetryable, retryAfterMs, statusMessage } from "./kube-errors.js";

export interface KubeRetryPolicy {
  /** Give up after this long. */
  deadlineMs: number;
  backoff: BackoffPolicy;
}

export async function withKubeRetry<T>(
  what: string,
  call: () => Promise<T>,
  policy: KubeRetryPolicy,
  log: Logger,
): Promise<T> {
  const giveUpAt = Date.now() + policy.deadlineMs;
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      if (!isRetryable(err)) throw err;
      const delay = Math.min(
        policy.backoff.maxMs,
        retryAfterMs(err) ?? backoffDelay(attempt, policy.backoff),
      );
      if (Date.now() + delay > giveUpAt) throw err;
      log.warn({ err: statusMessage(err), retryInMs: delay }, `${what}: Kubernetes API failed; retrying`);
      await sleep(delay);
    }
  }
}
