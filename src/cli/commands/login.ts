// `fleetq login`: the device authorization flow (RFC 8628) at the identity provider the API names
// (GET /auth/config), its tokens cached for that API (token-cache.ts); `fleetq logout` forgets
// them and revokes the refresh token; `fleetq whoami` asks the API who the credentials are.
// openid-client is loaded only here, when one of these runs.
import type { Command } from "commander";
import type * as OpenId from "openid-client";
import { WHOAMI } from "../client/queries.js";
import {
  action,
  apiClientOf,
  connectionOf,
  outputFormat,
  print,
  printErr,
  printJson,
} from "../command-context.js";
import { CliError, EXIT } from "../exit-codes.js";
import { audienceParameters, cachedConfiguration, insecureOnLoopback, tokensFrom } from "../oidc-session.js";
import { cachedTokens, saveTokens } from "../token-cache.js";

interface SignInConfig {
  issuer: string;
  clientId: string;
  scopes: string;
  audience?: string;
}

interface LoginOptions {
  issuer?: string;
  clientId?: string;
  scopes?: string;
  audience?: string;
}

const DEFAULT_SCOPES = "openid email profile groups offline_access";

/** The API's sign-in configuration; null when it has none (404). */
async function apiSignInConfig(apiUrl: string): Promise<Partial<SignInConfig> | null> {
  const url = apiUrl.replace(/\/graphql$/, "/auth/config");
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(15_000) });
  } catch (e) {
    const cause = (e as { cause?: { code?: string } }).cause?.code ?? (e as Error).message;
    throw new CliError(`cannot reach the fleetq API at ${url}: ${cause}`, EXIT.UNAVAILABLE);
  }
  if (res.status === 404) return null;
  if (!res.ok)
    throw new CliError(
      `${url} answered HTTP ${res.status}`,
      res.status >= 500 ? EXIT.UNAVAILABLE : EXIT.REJECTED,
    );
  return (await res.json()) as Partial<SignInConfig>;
}

/** Flags over what the API says. */
async function signInConfig(apiUrl: string, opts: LoginOptions): Promise<SignInConfig> {
  const fromApi = opts.issuer && opts.clientId ? {} : await apiSignInConfig(apiUrl);
  const issuer = opts.issuer ?? fromApi?.issuer;
  const clientId = opts.clientId ?? fromApi?.clientId;
  if (!issuer || !clientId)
    throw new CliError(
      `the API at ${apiUrl} has no sign-in with an identity provider configured (FLEETQ_OIDC_ISSUER); give --issuer and --client-id, or use a token (--token, FLEETQ_TOKEN)`,
    );
  if (!URL.canParse(issuer)) throw new CliError(`--issuer: "${issuer}" is not a URL`);
  return {
    issuer,
    clientId,
    scopes: opts.scopes ?? fromApi?.scopes ?? DEFAULT_SCOPES,
    audience: opts.audience ?? fromApi?.audience,
  };
}

async function discover(client: typeof OpenId, c: SignInConfig): Promise<OpenId.Configuration> {
  try {
    return await client.discovery(new URL(c.issuer), c.clientId, undefined, client.None(), {
      execute: insecureOnLoopback(client, c.issuer),
      timeout: 15,
    });
  } catch (e) {
    throw new CliError(
      `cannot read the identity provider's configuration at ${c.issuer}: ${(e as Error).message}`,
      EXIT.UNAVAILABLE,
    );
  }
}

/** The provider's refusal while polling, as the CLI reports it. `deadline`: when the code expires
 * (openid-client stops polling then, with a timeout of its own). */
function pollError(client: typeof OpenId, e: unknown, deadline: number): CliError {
  const error = e instanceof client.ResponseBodyError ? e.error : undefined;
  const timedOut = (e as { code?: string })?.code === "OAUTH_TIMEOUT" && Date.now() >= deadline - 1000;
  if (error === "access_denied") return new CliError("sign-in was denied at the identity provider");
  if (error === "expired_token" || timedOut)
    return new CliError("the code expired before it was approved: run `fleetq login` again", EXIT.TIMED_OUT);
  if (e instanceof client.ResponseBodyError)
    return new CliError(
      `the identity provider refused the sign-in: ${e.error}${e.error_description ? ` (${e.error_description})` : ""}`,
    );
  return new CliError(
    `the identity provider could not be reached: ${(e as Error).message}`,
    EXIT.UNAVAILABLE,
  );
}

type Tokens = OpenId.TokenEndpointResponse & OpenId.TokenEndpointResponseHelpers;

/** Asks the provider for a code, shows it, and polls until the person approved it (or not). */
async function approvedTokens(
  client: typeof OpenId,
  config: OpenId.Configuration,
  c: SignInConfig,
): Promise<Tokens> {
  let deadline = Number.POSITIVE_INFINITY;
  try {
    const device = await client.initiateDeviceAuthorization(config, {
      scope: c.scopes,
      ...audienceParameters(c.audience),
    });
    printErr(`To sign in, open ${device.verification_uri} and enter the code ${device.user_code}`);
    if (device.verification_uri_complete) printErr(`(or open ${device.verification_uri_complete})`);
    printErr("Waiting for the sign-in to be approved…");
    deadline = Date.now() + device.expires_in * 1000;
    // openid-client waits the interval between polls, 5 s more after each slow_down.
    return await client.pollDeviceAuthorizationGrant(config, device);
  } catch (e) {
    throw pollError(client, e, deadline);
  }
}

async function deviceLogin(apiUrl: string, opts: LoginOptions): Promise<void> {
  const c = await signInConfig(apiUrl, opts);
  const client = await import("openid-client");
  const config = await discover(client, c);
  const meta = config.serverMetadata();
  if (!meta.device_authorization_endpoint)
    throw new CliError(`the identity provider ${c.issuer} does not offer the device authorization flow`);
  const tokens = await approvedTokens(client, config, c);
  const { issuer, clientId, audience } = c;
  const tokenEndpoint = meta.token_endpoint!;
  const revocationEndpoint = meta.revocation_endpoint;
  saveTokens(apiUrl, tokensFrom(tokens, { issuer, clientId, audience, tokenEndpoint, revocationEndpoint }));
  const claims = tokens.claims();
  const who = claims ? String(claims.email ?? claims.preferred_username ?? claims.sub) : "you";
  printErr(`Signed in to ${apiUrl} as ${who}`);
}

async function logout(apiUrl: string): Promise<void> {
  const t = cachedTokens(apiUrl);
  if (!t) return printErr(`not signed in to ${apiUrl}`);
  saveTokens(apiUrl, null);
  if (t.refreshToken && t.revocationEndpoint) {
    const client = await import("openid-client");
    // Forgotten here whatever the provider says; a failed revocation is worth a warning only.
    await client
      .tokenRevocation(cachedConfiguration(client, t), t.refreshToken, { token_type_hint: "refresh_token" })
      .catch((e) =>
        printErr(
          `fleetq: warning: the identity provider did not revoke the refresh token: ${(e as Error).message}`,
        ),
      );
  }
  printErr(`Signed out of ${apiUrl}`);
}

interface Me {
  name: string;
  role: string;
  queues: string[];
  cluster: string | null;
  subject: string | null;
  email: string | null;
}

export function registerLogin(program: Command): void {
  program
    .command("login")
    .description("sign in with your identity provider (device flow); the tokens are kept for this API")
    .option("--issuer <url>", "the identity provider (default: the one the API names)")
    .option("--client-id <id>", "the client to sign in as (default: the API's)")
    .option("--scopes <scopes>", "scopes to ask for (default: the API's)")
    .option("--audience <aud>", "the API's identifier at the provider (default: the API's)")
    .action(
      action(async (opts: LoginOptions, cmd: Command) => {
        // The flag's token, if any, is not this sign-in's business: only the URL is used.
        await deviceLogin(connectionOf(cmd).url, opts);
      }),
    );
  program
    .command("logout")
    .description("forget the tokens `fleetq login` kept for this API (and revoke them at the provider)")
    .action(action(async (_opts: unknown, cmd: Command) => logout(connectionOf(cmd).url)));
  program
    .command("whoami")
    .description("who the API takes you for: name, role, scope")
    .action(
      action(async (_opts: unknown, cmd: Command) => {
        const { me } = await apiClientOf(cmd).request<{ me: Me }>(WHOAMI);
        if (outputFormat(cmd) === "json") return printJson(me);
        const scope = me.queues.length
          ? ` (queues ${me.queues.join(", ")})`
          : me.cluster
            ? ` (cluster ${me.cluster})`
            : "";
        print(`${me.name}: ${me.role}${scope}`);
        if (me.subject) print(`person: ${me.subject}${me.email ? ` <${me.email}>` : ""}`);
      }),
    );
}
