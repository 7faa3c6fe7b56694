// Reading errors of the Kubernetes API: the HTTP status, the Status object's message, and
// whether trying again can help (throttling, server errors, the network).
import { ApiException } from "@kubernetes/client-node";

export function httpStatus(err: unknown): number | null {
  if (err instanceof ApiException) return err.code;
  const code = (err as { statusCode?: unknown; code?: unknown } | null)?.statusCode;
  return typeof code === "number" ? code : null;
}

/** The `message` of the Status body the API server sent, or the error's own message. */
export function statusMessage(err: unknown): string {
  if (err instanceof ApiException) {
    const body = err.body;
    if (typeof body === "string") {
      try {
        const status = JSON.parse(body) as { message?: string };
        if (status.message) return `${status.message} (HTTP ${err.code})`;
      } catch {
        // not JSON: fall through
      }
    }
    return `HTTP ${err.code}`;
  }
  return err instanceof Error ? err.message : String(err);
}

/** 429 (throttled, or an eviction blocked by a disruption budget), 5xx and network
 * failures are worth retrying; other answers are final. */
export function isRetryable(err: unknown): boolean {
  const status = httpStatus(err);
  if (status === null) return !(err instanceof ApiException);
  return status === 429 || status >= 500;
}

/** Seconds the server asked us to wait (Retry-After), if it said. */
export function retryAfterMs(err: unknown): number | null {
  if (!(err instanceof ApiException)) return null;
  const header = err.headers?.["retry-after"];
  const seconds = header === undefined ? Number.NaN : Number(header);
  return Number.isFinite(seconds) ? seconds * 1000 : null;
}
