// The dashboard's sign-in routes on a real API against a real OpenID provider (oidc-provider, in
// this process): GET /auth/config names the provider; POST /auth/token exchanges a code obtained
// at the provider's own pages (driven over HTTP, with a PKCE challenge computed here) for the
// dashboard, and /auth/refresh renews the tokens. A wrong verifier, another redirect URI, another
// client or a nonce that is not the sign-in's are refused, with the reason.
import { createHash, randomBytes } from "node:crypto";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { oidcConfigFromEnv } from "../../src/api/identity/oidc-config.js";
import { startTestApi, type TestApi } from "../helpers/api.js";
import { walkProviderPages } from "../helpers/oidc-interactions.js";
import { startOidcProvider, type TestOidcProvider } from "../helpers/oidc-provider.js";

let provider: TestOidcProvider;
let api: TestApi;
let base: string;

/** A free loopback port: the provider must know the dashboard's address before the API starts. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  provider = await startOidcProvider({
    accounts: { alice: { email: "alice@example.com", groups: ["ml"] } },
    clients: [
      {
        client_id: "fleetq",
        token_endpoint_auth_method: "none",
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        redirect_uris: [`${base}/`, `${base}/elsewhere`],
      },
    ],
  });
  api = await startTestApi({
    port,
    oidc: oidcConfigFromEnv({
      FLEETQ_OIDC_ISSUER: provider.issuer,
      FLEETQ_OIDC_AUDIENCE: provider.audience,
      FLEETQ_OIDC_CLIENT_ID: "fleetq",
    }),
  });
});
afterAll(async () => {
  await api?.close();
  await provider?.close();
});

const b64url = (b: Buffer) => b.toString("base64url");

interface SignIn {
  code: string;
  verifier: string;
  nonce: string;
}

/** The dashboard's first half: to the provider with PKCE (S256), state and nonce, and back with a code. */
async function codeFromProvider(redirectUri = `${base}/`): Promise<SignIn> {
  const verifier = b64url(randomBytes(32));
  const state = b64url(randomBytes(16));
  const nonce = b64url(randomBytes(16));
  const config = (await (await fetch(`${base}/auth/config`)).json()) as { authorizationEndpoint: string };
  const url = new URL(config.authorizationEndpoint);
  for (const [k, v] of Object.entries({
    response_type: "code",
    client_id: "fleetq",
    redirect_uri: redirectUri,
    scope: "openid email groups offline_access",
    prompt: "consent",
    resource: provider.audience,
    state,
    nonce,
    code_challenge: b64url(createHash("sha256").update(verifier).digest()),
    code_challenge_method: "S256",
  }))
    url.searchParams.set(k, v);
  const back = new URL(
    (await walkProviderPages(url.toString(), { login: "alice", stopAt: redirectUri })).url,
  );
  expect(back.searchParams.get("state")).toBe(state);
  return { code: back.searchParams.get("code")!, verifier, nonce };
}

async function post(path: string, body: Record<string, string>) {
  const res = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return {
    status: res.status,
    cache: res.headers.get("cache-control"),
    body: (await res.json()) as Record<string, string>,
  };
}

const exchange = (s: SignIn, over: Record<string, string> = {}) =>
  post("/auth/token", {
    client_id: "fleetq",
    code: s.code,
    code_verifier: s.verifier,
    redirect_uri: `${base}/`,
    nonce: s.nonce,
    ...over,
  });

const jwtPayload = (jwt: string) => JSON.parse(Buffer.from(jwt.split(".")[1]!, "base64url").toString());

it("GET /auth/config names the provider, the client, the scopes, the audience and where to sign in", async () => {
  const res = await fetch(`${base}/auth/config`);
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual({
    issuer: provider.issuer,
    clientId: "fleetq",
    scopes: "openid email profile groups offline_access",
    audience: provider.audience,
    authorizationEndpoint: `${provider.issuer}/auth`,
  });
});

describe("POST /auth/token", () => {
  it("refuses another client, another redirect URI, missing fields and a wrong verifier; then exchanges the code", async () => {
    const signIn = await codeFromProvider();
    const other = await exchange(signIn, { client_id: "someone-else" });
    expect(other.status).toBe(400);
    expect(other.body).toMatchObject({ error: "invalid_client" });
    expect(other.body.error_description).toContain("someone-else");

    const elsewhere = await exchange(signIn, { redirect_uri: `${base}/elsewhere` });
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body).toMatchObject({ error: "invalid_request" });
    expect(elsewhere.body.error_description).toContain(
      `redirect_uri must be the dashboard's address, ${base}/`,
    );

    const missing = await exchange(signIn, { code_verifier: "" });
    expect(missing.status).toBe(400);
    expect(missing.body.error_description).toContain("code_verifier is missing");

    const wrong = await exchange(signIn, { code_verifier: b64url(randomBytes(32)) });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe("invalid_grant");

    // The provider spends a code on a failed PKCE check: a new sign-in.
    const again = await codeFromProvider();
    const ok = await exchange(again);
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.cache).toBe("no-store");
    expect(ok.body.refresh_token).toBeTruthy();
    expect(jwtPayload(ok.body.access_token!)).toMatchObject({ sub: "alice", aud: provider.audience });
    expect(jwtPayload(ok.body.id_token!)).toMatchObject({ sub: "alice", nonce: again.nonce });
  }, 60_000);

  it("refuses an ID token whose nonce is not the sign-in's", async () => {
    const signIn = await codeFromProvider();
    const r = await exchange(signIn, { nonce: "another-nonce" });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ error: "invalid_grant" });
    expect(r.body.error_description).toContain("nonce");
  }, 60_000);
});

it("POST /auth/refresh renews the tokens for the configured client only", async () => {
  const tokens = (await exchange(await codeFromProvider())).body;
  const other = await post("/auth/refresh", {
    client_id: "someone-else",
    refresh_token: tokens.refresh_token!,
  });
  expect(other.status).toBe(400);
  expect(other.body.error).toBe("invalid_client");

  const renewed = await post("/auth/refresh", { client_id: "fleetq", refresh_token: tokens.refresh_token! });
  expect(renewed.status, JSON.stringify(renewed.body)).toBe(200);
  expect(renewed.body.access_token).not.toBe(tokens.access_token);
  expect(jwtPayload(renewed.body.access_token!)).toMatchObject({ sub: "alice", aud: provider.audience });

  const bogus = await post("/auth/refresh", { client_id: "fleetq", refresh_token: "not-a-refresh-token" });
  expect(bogus.status).toBe(400);
  expect(bogus.body.error).toBe("invalid_grant");
}, 60_000);

it("a server without sign-in answers 404 on /auth/config and the token routes", async () => {
  const plain = await startTestApi({ oidc: null });
  try {
    const root = plain.url.replace(/\/graphql$/, "");
    const config = await fetch(`${root}/auth/config`);
    expect(config.status).toBe(404);
    expect(((await config.json()) as { error_description: string }).error_description).toContain(
      "not configured",
    );
    expect((await fetch(`${root}/auth/token`, { method: "POST" })).status).toBe(404);
  } finally {
    await plain.close();
  }
});
