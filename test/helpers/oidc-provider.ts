// A real OpenID provider (oidc-provider) on a free loopback port, for tests of sign-in: it
// publishes discovery and its JWKS, and signs JWT access tokens for the API's audience (resource
// indicators). Tokens for a person with given groups are minted without a browser
// (`accessToken`); the provider's own endpoints (device flow, code + PKCE with its dev
// interactions) are there too for tests that drive them over HTTP. `rotateKeys` replaces the
// signing key while the issuer stays the same.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, type JWK } from "jose";
import Provider, { type ClientMetadata, type Configuration } from "oidc-provider";

/** The claims a test person carries. */
export interface TestAccount {
  email?: string;
  groups?: string[];
  /** More claims, as they appear in the provider's userinfo and the tokens. */
  [claim: string]: unknown;
}

export interface TestOidcProviderOptions {
  /** The API's identifier at the provider (the `aud` of its access tokens). Default "https://fleetq.test/api". */
  audience?: string;
  /** Default: a public client "fleetq" (device flow, code + PKCE, refresh). */
  clients?: ClientMetadata[];
  /** People known to the provider, by subject (more with `addAccount`). */
  accounts?: Record<string, TestAccount>;
  /** Merged over the helper's features (resourceIndicators, devInteractions, deviceFlow, …). */
  features?: Configuration["features"];
  /** Anything else of oidc-provider's configuration, merged last. */
  configuration?: Partial<Configuration>;
  /** Access token lifetime in seconds (default 600). */
  accessTokenTTL?: number;
  /** Signing algorithm of the provider's key (default RS256). */
  alg?: "RS256" | "ES256" | "PS256";
}

export interface TestOidcProvider {
  /** http://127.0.0.1:<port> (its tokens' `iss`). */
  issuer: string;
  audience: string;
  /** The current oidc-provider instance (replaced by rotateKeys). */
  provider(): Provider;
  addAccount(subject: string, account: TestAccount): void;
  /** A signed JWT access token for `subject` (its account's claims added), issued to `clientId`. */
  accessToken(
    subject: string,
    opts?: { clientId?: string; audience?: string; ttl?: number },
  ): Promise<string>;
  /** A new signing key (new kid) replaces the old one; tokens signed before no longer verify at a
   * verifier that refetches the JWKS. Returns the new kid. */
  rotateKeys(): Promise<string>;
  /** The current private signing key (for tests crafting tokens with the provider's key). */
  signingKey(): JWK;
  /** While down, every request is answered 503 (an outage of the provider). */
  setDown(down: boolean): void;
  /** How many requests reached this path (e.g. "/jwks", "/.well-known/openid-configuration"). */
  requests(path: string): number;
  close(): Promise<void>;
}

const DEFAULT_CLIENTS: ClientMetadata[] = [
  {
    client_id: "fleetq",
    token_endpoint_auth_method: "none",
    grant_types: ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code"],
    response_types: ["code"],
    redirect_uris: ["http://127.0.0.1/callback"],
  },
];

async function newKey(alg: string): Promise<JWK> {
  const { privateKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = await exportJWK(privateKey);
  return { ...jwk, alg, use: "sig", kid: `k-${Math.random().toString(36).slice(2, 10)}` };
}

export async function startOidcProvider(opts: TestOidcProviderOptions = {}): Promise<TestOidcProvider> {
  const audience = opts.audience ?? "https://fleetq.test/api";
  const alg = opts.alg ?? "RS256";
  const ttl = opts.accessTokenTTL ?? 600;
  const accounts = new Map(Object.entries(opts.accounts ?? {}));
  let current: Provider | null = null;
  let down = false;
  const counts = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    counts.set(path, (counts.get(path) ?? 0) + 1);
    if (down) return void res.writeHead(503).end("provider down");
    current!.callback()(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let key = await newKey(alg);

  const claimsOf = (sub: string) => {
    const { email, groups, ...rest } = accounts.get(sub) ?? {};
    return { ...rest, ...(email ? { email } : {}), ...(groups ? { groups } : {}) };
  };
  const resourceServer = (aud: string, tokenTtl = ttl) => ({
    scope: "openid email profile groups",
    audience: aud,
    accessTokenTTL: tokenTtl,
    accessTokenFormat: "jwt" as const,
    jwt: { sign: { alg } },
  });

  const build = () => {
    const provider = new Provider(issuer, {
      clients: opts.clients ?? DEFAULT_CLIENTS,
      jwks: { keys: [key as never] },
      findAccount: (_ctx: unknown, sub: string) =>
        accounts.has(sub) ? { accountId: sub, claims: () => ({ sub, ...claimsOf(sub) }) } : undefined,
      claims: { openid: ["sub"], email: ["email"], groups: ["groups"] },
      scopes: ["openid", "email", "profile", "groups", "offline_access"],
      // The person's e-mail and groups in the access token too: the API reads them there.
      extraTokenClaims: (_ctx: unknown, token: { accountId?: string }) =>
        token.accountId ? claimsOf(token.accountId) : undefined,
      features: {
        devInteractions: { enabled: true },
        deviceFlow: { enabled: true },
        revocation: { enabled: true },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => audience,
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx: unknown, indicator: string) => resourceServer(indicator),
        },
        ...opts.features,
      },
      ttl: { AccessToken: ttl },
      ...opts.configuration,
    });
    provider.proxy = false;
    return provider;
  };
  current = build();

  return {
    issuer,
    audience,
    provider: () => current!,
    addAccount: (subject, account) => void accounts.set(subject, account),
    accessToken: async (subject, o = {}) => {
      const p = current!;
      const client = await p.Client.find(o.clientId ?? (opts.clients ?? DEFAULT_CLIENTS)[0]!.client_id);
      if (!client) throw new Error(`no client ${o.clientId}`);
      const aud = o.audience ?? audience;
      const token = new p.AccessToken({
        accountId: subject,
        client,
        scope: "openid email groups",
        expiresIn: o.ttl ?? ttl,
        resourceServer: new p.ResourceServer(aud, resourceServer(aud, o.ttl)),
      } as never);
      return token.save();
    },
    rotateKeys: async () => {
      key = await newKey(alg);
      current = build();
      return key.kid!;
    },
    signingKey: () => key,
    setDown: (d) => {
      down = d;
    },
    requests: (path) => counts.get(path) ?? 0,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
