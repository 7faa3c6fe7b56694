// The unauthenticated routes through which people sign in with the identity provider
// (docs/security.md): GET /auth/config tells the CLI and the dashboard where to sign in; POST
// /auth/token and /auth/refresh make the dashboard's token requests on its behalf, so that its
// page talks to this server only (CSP connect-src 'self'). They accept only the configured
// client and the dashboard's own redirect URI: they are no general proxy to the provider.
import express, { type Express, type Request, type Response } from "express";
import type { Configuration } from "openid-client";
import type { OidcConfig } from "./oidc-config.js";

/** Where the dashboard is served, and so where the provider sends people back. */
export const DASHBOARD_PATH = "/";

/** An OAuth error answer (RFC 6749 §5.2): `error` and `error_description`. */
class OAuthError {
  constructor(
    readonly status: number,
    readonly error: string,
    readonly description: string,
  ) {}
}

const refusal = (error: string, description: string, status = 400) =>
  new OAuthError(status, error, description);

function send(res: Response, body: unknown): void {
  // Tokens never sit in a cache.
  res.setHeader("cache-control", "no-store");
  if (body instanceof OAuthError)
    res.status(body.status).json({ error: body.error, error_description: body.description });
  else res.json(body);
}

const isLoopback = (host: string) => ["localhost", "127.0.0.1", "[::1]"].includes(host);

/** The provider's metadata, read once (again after a failure). */
function discoverer(oidc: OidcConfig): () => Promise<Configuration> {
  let found: Promise<Configuration> | null = null;
  return () => {
    found ??= (async () => {
      const client = await import("openid-client");
      const issuer = new URL(oidc.issuer);
      // http only for a provider on a loopback address (oidcConfigFromEnv refuses it otherwise).
      const execute =
        issuer.protocol === "http:" && isLoopback(issuer.hostname) ? [client.allowInsecureRequests] : [];
      return client.discovery(issuer, oidc.clientId, undefined, client.None(), { execute, timeout: 10 });
    })();
    found.catch(() => {
      found = null;
    });
    return found;
  };
}

/** The dashboard's redirect URI as this request's client sees this server: the page's origin
 * (browsers send it on POST), else the Host it asked for. */
function dashboardRedirectUri(req: Request): string {
  const origin = req.get("origin") ?? `${req.protocol}://${req.get("host")}`;
  return `${origin}${DASHBOARD_PATH}`;
}

function stringField(body: unknown, name: string): string | OAuthError {
  const v = (body as Record<string, unknown> | undefined)?.[name];
  if (typeof v === "string" && v) return v;
  return refusal("invalid_request", `${name} is missing (a non-empty string is expected)`);
}

/** The request's fields, each present, with client_id the configured one. */
function fields<K extends string>(
  req: Request,
  oidc: OidcConfig,
  names: K[],
): Record<K, string> | OAuthError {
  // JSON only: a cross-site form cannot send it without the browser asking this server first.
  if (!req.is("application/json"))
    return refusal("invalid_request", "the body must be JSON (content-type: application/json)");
  const out = {} as Record<K, string>;
  for (const name of ["client_id" as K, ...names]) {
    const v = stringField(req.body, name);
    if (v instanceof OAuthError) return v;
    out[name] = v;
  }
  const clientId = (out as Record<string, string>).client_id;
  if (clientId !== oidc.clientId)
    return refusal("invalid_client", `client_id "${clientId}" is not this server's sign-in client`);
  return out;
}

type Tokens = import("openid-client").TokenEndpointResponse & { claims(): { nonce?: unknown } | undefined };

/** The provider's tokens, or its refusal passed on (502 when it could not answer). */
async function fromProvider(grant: () => Promise<Tokens>): Promise<Tokens | OAuthError> {
  const client = await import("openid-client");
  try {
    return await grant();
  } catch (e) {
    if (e instanceof client.ResponseBodyError)
      return refusal(e.error, e.error_description ?? `the identity provider refused: ${e.error}`);
    return refusal("temporarily_unavailable", `the identity provider failed: ${(e as Error).message}`, 502);
  }
}

/** What the dashboard gets of the provider's answer. */
function tokenAnswer(t: Tokens) {
  const { access_token, token_type, expires_in, refresh_token, id_token, scope } = t;
  return { access_token, token_type, expires_in, refresh_token, id_token, scope };
}

function audienceParameters(oidc: OidcConfig): Record<string, string> {
  // RFC 8707 resource indicators must be absolute URIs; `audience` is what other providers read.
  return URL.canParse(oidc.audience) ? { resource: oidc.audience } : { audience: oidc.audience };
}

async function exchangeCode(req: Request, oidc: OidcConfig, config: () => Promise<Configuration>) {
  const f = fields(req, oidc, ["code", "code_verifier", "redirect_uri", "nonce"]);
  if (f instanceof OAuthError) return f;
  const expected = dashboardRedirectUri(req);
  if (f.redirect_uri !== expected)
    return refusal("invalid_request", `redirect_uri must be the dashboard's address, ${expected}`);
  const client = await import("openid-client");
  const conf = await config();
  const tokens = await fromProvider(() =>
    client.genericGrantRequest(conf, "authorization_code", {
      code: f.code,
      code_verifier: f.code_verifier,
      redirect_uri: f.redirect_uri,
    }),
  );
  if (tokens instanceof OAuthError) return tokens;
  // The ID token must answer this sign-in, not one replayed from elsewhere.
  if (tokens.claims()?.nonce !== f.nonce)
    return refusal("invalid_grant", "the ID token's nonce is not the one this sign-in sent");
  return tokenAnswer(tokens);
}

async function refresh(req: Request, oidc: OidcConfig, config: () => Promise<Configuration>) {
  const f = fields(req, oidc, ["refresh_token"]);
  if (f instanceof OAuthError) return f;
  const client = await import("openid-client");
  const conf = await config();
  const tokens = await fromProvider(() =>
    client.refreshTokenGrant(conf, f.refresh_token, audienceParameters(oidc)),
  );
  return tokens instanceof OAuthError ? tokens : tokenAnswer(tokens);
}

/** The sign-in configuration for clients: 404 when the server takes static tokens only. */
async function publicConfig(oidc: OidcConfig, config: () => Promise<Configuration>) {
  const authorizationEndpoint = await config()
    .then((c) => c.serverMetadata().authorization_endpoint)
    .catch(() => undefined); // the CLI needs only the issuer; the dashboard says sign-in is unavailable
  const { issuer, clientId, scopes, audience } = oidc;
  return { issuer, clientId, scopes, audience, authorizationEndpoint };
}

export function mountAuthRoutes(app: Express, oidc: OidcConfig | null): void {
  if (!oidc) {
    app.all(/^\/auth\//, (_req, res) =>
      send(
        res,
        refusal("not_found", "sign-in with an identity provider is not configured on this server", 404),
      ),
    );
    return;
  }
  const config = discoverer(oidc);
  const guarded = (run: (req: Request) => Promise<unknown>) => async (req: Request, res: Response) => {
    try {
      send(res, await run(req));
    } catch (e) {
      send(
        res,
        refusal("temporarily_unavailable", `the identity provider failed: ${(e as Error).message}`, 502),
      );
    }
  };
  const json = express.json({ limit: "16kb" });
  app.get(
    "/auth/config",
    guarded(() => publicConfig(oidc, config)),
  );
  app.post(
    "/auth/token",
    json,
    guarded((req) => exchangeCode(req, oidc, config)),
  );
  app.post(
    "/auth/refresh",
    json,
    guarded((req) => refresh(req, oidc, config)),
  );
}
