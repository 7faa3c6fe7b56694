// The sign-in of `fleetq login` behind every API command given no token: the cached access token,
// refreshed with the refresh token shortly before it expires, and once more when the API refuses
// it (revoked keys, a clock off). openid-client is loaded only when a refresh is due.
import type * as OpenId from "openid-client";
import { CliError, EXIT } from "./exit-codes.js";
import { type CachedTokens, cachedTokens, saveTokens } from "./token-cache.js";

/** Refreshed this long before expiry, so that no request carries a token about to lapse. */
export const REFRESH_MARGIN_MS = 60_000;

const isLoopback = (host: string) => ["localhost", "127.0.0.1", "[::1]"].includes(host);

/** Options for openid-client: http only for a provider on a loopback address (tests, development). */
export function insecureOnLoopback(client: typeof OpenId, issuer: string) {
  const url = new URL(issuer);
  return url.protocol === "http:" && isLoopback(url.hostname) ? [client.allowInsecureRequests] : [];
}

/** `resource` (RFC 8707, absolute URIs only) or `audience` (other providers): the API's token. */
export function audienceParameters(audience: string | undefined): Record<string, string> {
  if (!audience) return {};
  return URL.canParse(audience) ? { resource: audience } : { audience };
}

/** The cached entry updated with a token response (a provider may not rotate the refresh token). */
export function tokensFrom(
  response: OpenId.TokenEndpointResponse,
  base: Omit<CachedTokens, "accessToken" | "expiresAt">,
): CachedTokens {
  return {
    ...base,
    accessToken: response.access_token,
    refreshToken: response.refresh_token ?? base.refreshToken,
    idToken: response.id_token ?? base.idToken,
    expiresAt: response.expires_in === undefined ? null : Date.now() + response.expires_in * 1000,
  };
}

/** The provider as openid-client sees it, from what the cache holds (no discovery request). */
export function cachedConfiguration(client: typeof OpenId, t: CachedTokens): OpenId.Configuration {
  const config = new client.Configuration(
    { issuer: t.issuer, token_endpoint: t.tokenEndpoint, revocation_endpoint: t.revocationEndpoint },
    t.clientId,
    undefined,
    client.None(),
  );
  for (const allow of insecureOnLoopback(client, t.issuer)) allow(config);
  return config;
}

const due = (t: CachedTokens) => t.expiresAt !== null && t.expiresAt - Date.now() < REFRESH_MARGIN_MS;

export class SignedInSession {
  private forced = false;

  constructor(
    readonly apiUrl: string,
    private tokens: CachedTokens,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  async accessToken(): Promise<string> {
    if (due(this.tokens)) await this.refresh();
    return this.tokens.accessToken;
  }

  /** After the API refused the access token: a refreshed one (once per run), or null. */
  async refreshed(): Promise<string | null> {
    if (this.forced || !this.tokens.refreshToken) return null;
    this.forced = true;
    await this.refresh();
    return this.tokens.accessToken;
  }

  private async refresh(): Promise<void> {
    // Another fleetq run may have refreshed meanwhile: a refresh token may be good for one use.
    const latest = cachedTokens(this.apiUrl, this.env);
    if (latest && latest.accessToken !== this.tokens.accessToken && !due(latest)) {
      this.tokens = latest;
      return;
    }
    const refreshToken = this.tokens.refreshToken;
    if (!refreshToken)
      throw new CliError(`the sign-in to ${this.apiUrl} has expired: run \`fleetq login\` again`);
    const client = await import("openid-client");
    const { accessToken: _a, expiresAt: _e, ...base } = this.tokens;
    try {
      const response = await client.refreshTokenGrant(
        cachedConfiguration(client, this.tokens),
        refreshToken,
        audienceParameters(this.tokens.audience),
      );
      this.tokens = tokensFrom(response, base);
    } catch (e) {
      throw refreshError(client, e, this.apiUrl);
    }
    saveTokens(this.apiUrl, this.tokens, this.env);
  }
}

function refreshError(client: typeof OpenId, e: unknown, apiUrl: string): CliError {
  if (e instanceof client.ResponseBodyError)
    return new CliError(
      `the sign-in to ${apiUrl} could not be renewed (the identity provider said ${e.error}${e.error_description ? `: ${e.error_description}` : ""}): run \`fleetq login\` again`,
    );
  return new CliError(
    `the identity provider could not renew the sign-in to ${apiUrl}: ${(e as Error).message}`,
    EXIT.UNAVAILABLE,
  );
}
