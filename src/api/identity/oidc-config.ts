// Where people sign in: the OpenID provider whose tokens the API accepts, and the claims that
// name a person and their groups. Unset issuer = static tokens only.
export interface OidcConfig {
  /** The issuer URL exactly as its tokens' `iss` says it; discovery is read from it. */
  issuer: string;
  /** The `aud` a token must carry (access tokens) — the API's own identifier at the provider. */
  audience: string;
  /** The public client the CLI (device flow) and the dashboard (code + PKCE) sign in as. */
  clientId: string;
  /** Scopes asked for at sign-in. */
  scopes: string;
  claims: { subject: string; email: string; groups: string };
}

export type OidcEnv = Record<string, string | undefined>;

/** The configuration from FLEETQ_OIDC_* variables, or null when no issuer is set. A partial one is
 * refused with the variable that is missing, so a typo never silently turns sign-in off. */
export function oidcConfigFromEnv(env: OidcEnv = process.env): OidcConfig | null {
  const issuer = env.FLEETQ_OIDC_ISSUER?.trim();
  if (!issuer) return null;
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw new Error(`FLEETQ_OIDC_ISSUER is not a URL: ${issuer}`);
  }
  if (url.protocol !== "https:" && !isLoopback(url.hostname))
    throw new Error(`FLEETQ_OIDC_ISSUER must be https (or a loopback address): ${issuer}`);
  const audience = env.FLEETQ_OIDC_AUDIENCE?.trim();
  if (!audience) throw new Error("FLEETQ_OIDC_AUDIENCE must be set with FLEETQ_OIDC_ISSUER");
  return {
    issuer,
    audience,
    clientId: env.FLEETQ_OIDC_CLIENT_ID?.trim() || "fleetq",
    scopes: env.FLEETQ_OIDC_SCOPES?.trim() || "openid email profile groups offline_access",
    claims: {
      subject: env.FLEETQ_OIDC_SUBJECT_CLAIM?.trim() || "sub",
      email: env.FLEETQ_OIDC_EMAIL_CLAIM?.trim() || "email",
      groups: env.FLEETQ_OIDC_GROUPS_CLAIM?.trim() || "groups",
    },
  };
}

function isLoopback(host: string): boolean {
  return host === "localhost" || host === "127.0.0.1" || host === "[::1]" || host === "::1";
}
