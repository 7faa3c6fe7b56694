// Bearer → principal, remembered briefly: every request is authenticated, and a database round
// trip (or a signature check) per request would be most of a submission's cost. A bearer that
// looks like a JWT is the identity provider's (verified, then the person's role bindings make
// the principal); anything else is a static token. A revocation or a role binding's change clears
// the cache at once on the replica that made it and, through the event bus, on every other
// replica; should that message be lost, the change still takes effect within TTL_MS.
import {
  authenticate,
  hashSecret,
  type Identity,
  type Principal,
  principalOfIdentity,
  type Store,
} from "../store/index.js";
import { InvalidTokenError, looksLikeJwt, type OidcVerifier } from "./identity/verifier.js";

/** How long a principal is trusted before its token or bindings are read again. */
const TTL_MS = 5_000;
/** Unknown and invalid bearers are remembered only this long: a token created a moment ago must
 * work soon (creating one also clears the cache), while a client retrying a bad token costs at
 * most a lookup per second or two. */
const UNKNOWN_TTL_MS = 1_500;
/** A verified token is trusted until this long before its `exp`. */
const EXPIRY_MARGIN_MS = 5_000;
const MAX_ENTRIES = 10_000;

/** Why a bearer gives no principal: the GraphQL error every field then answers. */
export interface AuthRefusal {
  code: "UNAUTHENTICATED" | "FORBIDDEN";
  message: string;
}

export interface AuthOutcome {
  principal: Principal | null;
  /** Null for an unknown static token (the usual UNAUTHENTICATED answer). */
  refusal: AuthRefusal | null;
  /** Counted against the client's address: a bad credential looked up (not remembered), not a
   * provider that is down. */
  failed: boolean;
}

interface Entry {
  outcome: AuthOutcome;
  until: number;
  /** A verified JWT: its person, trusted until `personUntil` without checking the signature again. */
  person?: Identity;
  personUntil?: number;
}

export class PrincipalCache {
  private readonly entries = new Map<string, Entry>();
  /** Lookups under way: concurrent requests of one bearer share one. */
  private readonly pending = new Map<string, Promise<AuthOutcome>>();
  /** Bumped by clear(): a lookup that started before a revocation does not remember its answer. */
  private generation = 0;

  constructor(
    private readonly store: Store,
    private readonly verifier: OidcVerifier | null = null,
  ) {}

  async principalFor(secret: string): Promise<Principal | null> {
    return (await this.authenticate(secret)).principal;
  }

  /** The principal of a bearer remembered and still trusted, without any lookup. */
  cached(secret: string): Principal | null {
    const hit = this.entries.get(hashSecret(secret));
    return hit && hit.until > Date.now() ? hit.outcome.principal : null;
  }

  async authenticate(secret: string): Promise<AuthOutcome> {
    const key = hashSecret(secret);
    const now = Date.now();
    const hit = this.entries.get(key);
    // A remembered failure cost no lookup: it is not counted against the client again.
    if (hit && hit.until > now) return hit.outcome.failed ? { ...hit.outcome, failed: false } : hit.outcome;
    const under = this.pending.get(key);
    if (under) return under.then((o) => (o.failed ? { ...o, failed: false } : o));
    const lookup = this.lookUp(key, secret, hit, now, this.generation).finally(() => {
      if (this.pending.get(key) === lookup) this.pending.delete(key);
    });
    this.pending.set(key, lookup);
    return lookup;
  }

  private async lookUp(
    key: string,
    secret: string,
    hit: Entry | undefined,
    now: number,
    generation: number,
  ): Promise<AuthOutcome> {
    if (this.verifier && looksLikeJwt(secret)) {
      if (hit?.person && hit.personUntil! > now)
        return this.remember(key, generation, await this.ofPerson(hit.person), hit);
      return this.verify(key, generation, secret);
    }
    const principal = await authenticate(this.store, secret);
    return this.remember(key, generation, { principal, refusal: null, failed: !principal });
  }

  /** A token was revoked or created, a binding changed, a cluster deleted: forget everything,
   * it is cheap to relearn. */
  clear(): void {
    this.generation++;
    this.pending.clear();
    this.entries.clear();
  }

  private async verify(key: string, generation: number, token: string): Promise<AuthOutcome> {
    let verified: Awaited<ReturnType<OidcVerifier["verify"]>>;
    try {
      verified = await this.verifier!.verify(token);
    } catch (e) {
      if (e instanceof InvalidTokenError) {
        const message = `the bearer token is not valid: ${e.message}`;
        return this.remember(key, generation, {
          principal: null,
          refusal: { code: "UNAUTHENTICATED", message },
          failed: true,
        });
      }
      // The provider could not be asked (discovery): not the client's fault, not remembered.
      const message = `the bearer token cannot be checked now: ${(e as Error).message}`;
      return { principal: null, refusal: { code: "UNAUTHENTICATED", message }, failed: false };
    }
    const personUntil = verified.expiresAt - EXPIRY_MARGIN_MS;
    const outcome = await this.ofPerson(verified.identity);
    return this.remember(key, generation, outcome, { person: verified.identity, personUntil });
  }

  private async ofPerson(who: Identity): Promise<AuthOutcome> {
    const principal = await principalOfIdentity(this.store, who);
    if (principal) return { principal, refusal: null, failed: false };
    const shown = who.groups.slice(0, 10).join(", ") + (who.groups.length > 10 ? ", …" : "");
    const groups = who.groups.length ? ` or your groups (${shown})` : "";
    const message = `signed in as ${who.email ?? who.subject}, but no role binding names you${groups}: ask an ADMIN for one (fleetq rolebinding create)`;
    return { principal: null, refusal: { code: "FORBIDDEN", message }, failed: false };
  }

  private remember(
    key: string,
    generation: number,
    outcome: AuthOutcome,
    person?: Pick<Entry, "person" | "personUntil">,
  ): AuthOutcome {
    const now = Date.now();
    const ttl = outcome.principal || person?.person ? TTL_MS : UNKNOWN_TTL_MS;
    const until = Math.min(now + ttl, person?.personUntil ?? Number.POSITIVE_INFINITY);
    if (until <= now || generation !== this.generation) return outcome;
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(key, { outcome, until, person: person?.person, personUntil: person?.personUntil });
    return outcome;
  }
}
