// Verifies the identity provider's JWTs (access tokens for the API's audience): the issuer's
// discovery document is read once (again after a failure, at most once per retry delay), its
// keys through jose's remote JWK set (cached; a token signed with a key not seen yet refetches
// them, at most once per cooldown, so a key rotation is followed and a flood of made-up kids is
// not), then signature, issuer, audience and times are checked.
import { createRemoteJWKSet, errors, type JWTPayload, type JWTVerifyGetKey, jwtVerify } from "jose";
import type { Identity } from "../../store/index.js";
import type { OidcConfig } from "./oidc-config.js";

/** Asymmetric algorithms only: never `none`, never an HMAC keyed with a public key. */
export const ALLOWED_ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519",
];

export interface VerifierOptions {
  /** Seconds of clock skew allowed on exp, nbf and iat (default 30). */
  clockToleranceSeconds?: number;
  /** No JWKS refetch for an unknown kid within this long of the last fetch (default 30 s). */
  jwksCooldownMs?: number;
  /** A failed discovery is tried again after this long at the earliest (default 5 s). */
  discoveryRetryMs?: number;
  /** Timeout of each request to the provider (default 5 s). */
  fetchTimeoutMs?: number;
}

/** A signed-in person, and when their token expires (ms since the epoch). */
export interface VerifiedToken {
  identity: Identity;
  expiresAt: number;
}

/** A token that does not verify; the message says why, without echoing the token. */
export class InvalidTokenError extends Error {}

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/** Three base64url parts, the first a JSON object: a JWT (static tokens are `fq_…`). */
export const looksLikeJwt = (bearer: string): boolean => bearer.startsWith("eyJ") && JWT_SHAPE.test(bearer);

export class OidcVerifier {
  private keys: Promise<JWTVerifyGetKey> | null = null;
  private failed: { at: number; error: Error } | null = null;
  private readonly opts: Required<VerifierOptions>;

  constructor(
    readonly config: OidcConfig,
    opts: VerifierOptions = {},
  ) {
    this.opts = {
      clockToleranceSeconds: opts.clockToleranceSeconds ?? 30,
      jwksCooldownMs: opts.jwksCooldownMs ?? 30_000,
      discoveryRetryMs: opts.discoveryRetryMs ?? 5_000,
      fetchTimeoutMs: opts.fetchTimeoutMs ?? 5_000,
    };
  }

  async verify(token: string): Promise<VerifiedToken> {
    const keys = await this.jwks();
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keys, {
        issuer: this.config.issuer,
        audience: this.config.audience,
        algorithms: ALLOWED_ALGORITHMS,
        clockTolerance: this.opts.clockToleranceSeconds,
        requiredClaims: ["exp"],
      }));
    } catch (e) {
      throw new InvalidTokenError(reasonOf(e));
    }
    return { identity: this.identityOf(payload), expiresAt: payload.exp! * 1000 };
  }

  private identityOf(payload: JWTPayload): Identity {
    const { subject, email, groups } = this.config.claims;
    const sub = payload[subject];
    if (typeof sub !== "string" || !sub) throw new InvalidTokenError(`the token has no "${subject}" claim`);
    const mail = payload[email];
    const g = payload[groups];
    const list = typeof g === "string" ? [g] : Array.isArray(g) ? g.filter((x) => typeof x === "string") : [];
    // An address the provider says it has not verified names no one: it could be anyone's.
    const verified = payload.email_verified !== false;
    return { subject: sub, email: typeof mail === "string" && mail && verified ? mail : null, groups: list };
  }

  /** The provider's key set, from its discovery document (read once; a failure is retried). */
  private jwks(): Promise<JWTVerifyGetKey> {
    if (this.keys) return this.keys;
    if (this.failed && Date.now() - this.failed.at < this.opts.discoveryRetryMs) throw this.failed.error;
    this.keys = this.discover().catch((e: Error) => {
      this.keys = null;
      this.failed = { at: Date.now(), error: e };
      throw e;
    });
    return this.keys;
  }

  private async discover(): Promise<JWTVerifyGetKey> {
    const url = `${this.config.issuer.replace(/\/$/, "")}/.well-known/openid-configuration`;
    const res = await fetch(url, { signal: AbortSignal.timeout(this.opts.fetchTimeoutMs) }).catch((e) => {
      throw new Error(`the identity provider's discovery (${url}) is unreachable: ${(e as Error).message}`);
    });
    if (!res.ok) throw new Error(`the identity provider's discovery (${url}) answered ${res.status}`);
    const doc = (await res.json()) as { issuer?: unknown; jwks_uri?: unknown };
    // OpenID Connect Discovery: the document must name exactly the issuer it was read from.
    if (doc.issuer !== this.config.issuer)
      throw new Error(
        `the discovery document at ${url} names issuer ${String(doc.issuer)}, not ${this.config.issuer}`,
      );
    if (typeof doc.jwks_uri !== "string") throw new Error(`the discovery document at ${url} has no jwks_uri`);
    const jwksUri = new URL(doc.jwks_uri);
    // Keys fetched in clear from an https issuer could be swapped on the way.
    if (new URL(this.config.issuer).protocol === "https:" && jwksUri.protocol !== "https:")
      throw new Error(`the discovery document at ${url} names keys over ${jwksUri.protocol}, not https`);
    return createRemoteJWKSet(jwksUri, {
      cooldownDuration: this.opts.jwksCooldownMs,
      timeoutDuration: this.opts.fetchTimeoutMs,
    });
  }
}

function reasonOf(e: unknown): string {
  if (e instanceof errors.JWTExpired) return "the token has expired";
  if (e instanceof errors.JWTClaimValidationFailed) {
    if (e.claim === "iss") return "the token was issued by another identity provider";
    if (e.claim === "aud") return "the token is not meant for this API (audience)";
    if (e.claim === "nbf") return "the token is not valid yet";
    return `the token's "${e.claim}" claim is not valid`;
  }
  if (e instanceof errors.JOSEAlgNotAllowed) return "the token's signing algorithm is not allowed";
  if (e instanceof errors.JWKSNoMatchingKey)
    return "the token is signed with a key the identity provider does not publish";
  if (e instanceof errors.JWSSignatureVerificationFailed) return "the token's signature does not verify";
  if (e instanceof errors.JOSEError) return "the token is malformed";
  throw e;
}
