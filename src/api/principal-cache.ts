// Bearer secret → principal, remembered briefly: every request is authenticated, and a database
// round trip per request would be most of a submission's cost. A revocation clears the entry at
// once on the replica that made it and, through the event bus, on every other replica; should that
// message be lost, a revoked token still stops working within TTL_MS.
import { authenticate, hashSecret, type Principal, type Store } from "../store/index.js";

const TTL_MS = 5_000;
const MAX_ENTRIES = 10_000;

export class PrincipalCache {
  private readonly entries = new Map<string, { principal: Principal | null; until: number }>();

  constructor(private readonly store: Store) {}

  async principalFor(secret: string): Promise<Principal | null> {
    const key = hashSecret(secret);
    const hit = this.entries.get(key);
    if (hit && hit.until > Date.now()) return hit.principal;
    const principal = await authenticate(this.store, secret);
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    // Unknown secrets are not remembered: a token created a moment ago must work at once.
    if (principal) this.entries.set(key, { principal, until: Date.now() + TTL_MS });
    return principal;
  }

  /** A token was revoked (or its cluster deleted): forget everything, it is cheap to relearn. */
  clear(): void {
    this.entries.clear();
  }
}
