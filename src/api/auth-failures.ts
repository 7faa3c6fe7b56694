// Failed authentications per client address: a bucket of tries that refills slowly. An address
// that has used it up is answered 429 before its bearer is looked up (unless that bearer is one
// the API already knows as valid), so guessing tokens or replaying bad ones costs the API no
// database or signature work. Per process, like the per-token limits.
import { BlockList, isIPv4, isIPv6 } from "node:net";
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

/**
 * The client's address: the connection's, or, when the connection comes from a trusted proxy
 * (FLEETQ_TRUSTED_PROXIES: addresses and CIDR ranges), the last address in X-Forwarded-For that
 * is not a trusted proxy (earlier entries are whatever the client wrote).
 */
export function clientAddress(
  socket: string | undefined,
  forwardedFor: unknown,
  trusted: BlockList | null,
): string {
  const peer = plain(socket ?? "unknown");
  if (!trusted || !isTrusted(trusted, peer) || typeof forwardedFor !== "string") return peer;
  const hops = forwardedFor
    .split(",")
    .map((h) => plain(h.trim()))
    .filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) if (!isTrusted(trusted, hops[i]!)) return hops[i]!;
  return hops[0] ?? peer;
}

/** FLEETQ_TRUSTED_PROXIES ("10.0.0.0/8, 192.168.1.7"), or null when unset. A bad entry is refused. */
export function trustedProxies(
  spec: string | undefined = process.env.FLEETQ_TRUSTED_PROXIES,
): BlockList | null {
  const entries = (spec ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (!entries.length) return null;
  const list = new BlockList();
  for (const e of entries) {
    const [address, prefix] = e.split("/");
    const type = isIPv4(address!) ? "ipv4" : isIPv6(address!) ? "ipv6" : null;
    const bits = prefix === undefined ? (type === "ipv4" ? 32 : 128) : Number(prefix);
    if (!type || !Number.isInteger(bits) || bits < 0 || bits > (type === "ipv4" ? 32 : 128))
      throw new Error(`FLEETQ_TRUSTED_PROXIES: "${e}" is not an IP address or CIDR range`);
    list.addSubnet(address!, bits, type);
  }
  return list;
}

/** IPv4 clients of a dual-stack socket appear as ::ffff:a.b.c.d. */
const plain = (address: string) =>
  address.startsWith("::ffff:") && isIPv4(address.slice(7)) ? address.slice(7) : address;

const isTrusted = (list: BlockList, address: string) =>
  isIPv4(address) ? list.check(address, "ipv4") : isIPv6(address) && list.check(address, "ipv6");
