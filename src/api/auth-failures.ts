// Failed authentications per client address: a bucket of tries that refills slowly. An address
// that has used it up is answered 429 before its bearer is looked up (unless that bearer is one
// the API already knows as valid), so guessing tokens or replaying bad ones costs the API no
// database or signature work. Per process, like the per-token limits.
import type { AuthOutcome, PrincipalCache } from "./principal-cache.js";

export interface AuthFailureLimit {
  /** Failed authentications an address may make at once; 0 = no limit. */
  burst: number;
  /** Tries given back per second. */
  perSecond: number;
}

export const DEFAULT_AUTH_FAILURE_LIMIT: AuthFailureLimit = { burst: 30, perSecond: 1 };

const MAX_ADDRESSES = 10_000;

export class AuthFailureLimiter {
  private readonly buckets = new Map<string, { tries: number; at: number }>();

  constructor(
    private readonly limit: AuthFailureLimit = DEFAULT_AUTH_FAILURE_LIMIT,
    private readonly now: () => number = Date.now,
  ) {}

  /** Seconds until the address may try again, or null if it may now. */
  retryAfter(address: string): number | null {
    if (this.limit.burst <= 0) return null;
    const tries = this.refilled(address);
    if (tries >= 1) return null;
    return Math.max(1, Math.ceil((1 - tries) / this.limit.perSecond));
  }

  /** The address's bearer was unknown or invalid. */
  failed(address: string): void {
    if (this.limit.burst <= 0) return;
    const tries = this.refilled(address);
    if (!this.buckets.has(address) && this.buckets.size >= MAX_ADDRESSES) this.forgetFull();
    this.buckets.set(address, { tries: Math.max(0, tries - 1), at: this.now() });
  }

  private refilled(address: string): number {
    const b = this.buckets.get(address);
    if (!b) return this.limit.burst;
    return Math.min(this.limit.burst, b.tries + ((this.now() - b.at) / 1000) * this.limit.perSecond);
  }

  private forgetFull(): void {
    for (const address of this.buckets.keys())
      if (this.refilled(address) >= this.limit.burst) this.buckets.delete(address);
    if (this.buckets.size >= MAX_ADDRESSES) this.buckets.clear();
  }
}

/** Too many failed authentications from an address: what the 429 answer says. */
export interface AddressRefusal {
  retryAfter: number;
  message: string;
}

/** The outcome of a request's bearer (none = no principal, no refusal), or its address's
 * refusal; a failed authentication is counted against the address. */
export async function authenticateBearer(
  principals: PrincipalCache,
  failures: AuthFailureLimiter,
  secret: string | null,
  address: string | undefined,
): Promise<AuthOutcome | AddressRefusal> {
  if (!secret) return { principal: null, refusal: null, failed: false };
  const from = address ?? "unknown";
  const wait = failures.retryAfter(from);
  if (wait !== null) {
    const principal = principals.cached(secret);
    if (principal) return { principal, refusal: null, failed: false };
    return {
      retryAfter: wait,
      message: `too many failed authentications from ${from}: try again in ${wait} s with a valid token`,
    };
  }
  const outcome = await principals.authenticate(secret);
  if (outcome.failed) failures.failed(from);
  return outcome;
}
