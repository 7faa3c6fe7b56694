// The dashboard's sign-in routes on a real API against a real OpenID provider (oidc-provider, in
// this process): GET /auth/config names the provider; POST /auth/token exchanges a code obtained
// at the provider's own pages (driven over HTTP, with a PKCE challenge computed here) for the
// dashboard, and /auth/refresh renews the tokens. A wrong verifier, another redirect URI, another
// client or a nonce that is not the sign-in's are refused, with the reason.
import { createHash, randomBytes } from "node:crypto";
import net from "node:net";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { oidcConfigFromEnv } from "../../src/api/identity/oidc-config.js";
import { gql, gqlOk, startTestApi, type TestApi } from "../helpers/api.js";
import { walkProviderPages } from "../helpers/oidc-interactions.js";
import { startOidcProvider, type TestOidcProvider } from "../helpers/oidc-provider.js";
import { ROOT } from "../cli/run-cli.js";

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
    // A refresh token for every sign-in of a client allowed the grant, as many providers do
    // (oidc-provider's default gives one for offline_access only, which needs prompt=consent).
    configuration: {
      issueRefreshToken: async (_ctx: unknown, client: { grantTypeAllowed(g: string): boolean }) =>
        client.grantTypeAllowed("refresh_token"),
    },
  });
  api = await startTestApi({
    port,
    oidc: oidcConfigFromEnv({
      FLEETQ_OIDC_ISSUER: provider.issuer,
      FLEETQ_OIDC_AUDIENCE: provider.audience,
      FLEETQ_OIDC_CLIENT_ID: "fleetq",
    }),
  });
  await gqlOk(
    api.url,
    api.adminToken,
    'mutation { createRoleBinding(input: { subject: "alice", role: VIEWER }) { id } }',
  );
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

    const form = await fetch(`${base}/auth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ client_id: "fleetq", code: signIn.code }).toString(),
    });
    expect(form.status).toBe(400);
    expect(((await form.json()) as { error_description: string }).error_description).toContain(
      "must be JSON",
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
    // The dashboard's GraphQL requests carry it.
    const me = await gql<{ me: { role: string } }>(api.url, ok.body.access_token!, "{ me { role } }");
    expect(me.data?.me.role, JSON.stringify(me.errors)).toBe("VIEWER");
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

/** What the dashboard's sign-in module needs of a browser page at `base`: its address, history,
 * sessionStorage, and fetch of its own server's paths. Node has the rest (crypto, btoa). */
function pageAt(base: string) {
  const store = new Map<string, string>();
  const page = {
    location: new URL(`${base}/`),
    assigned: null as string | null,
  };
  const realFetch = globalThis.fetch;
  const globals = {
    location: Object.assign(page.location, {
      assign: (url: string) => {
        page.assigned = url;
      },
    }),
    history: {
      replaceState: (_s: unknown, _t: string, url: string) => {
        page.location.href = new URL(url, page.location).href;
      },
    },
    sessionStorage: {
      getItem: (k: string) => store.get(k) ?? null,
      setItem: (k: string, v: string) => void store.set(k, String(v)),
      removeItem: (k: string) => void store.delete(k),
    },
    fetch: (input: string, init?: RequestInit) =>
      realFetch(input.startsWith("/") ? `${base}${input}` : input, init),
  };
  const saved = Object.fromEntries(
    Object.keys(globals).map((k) => [k, Object.getOwnPropertyDescriptor(globalThis, k)]),
  );
  for (const [k, v] of Object.entries(globals))
    Object.defineProperty(globalThis, k, { value: v, configurable: true, writable: true });
  return {
    page,
    store,
    restore: () => {
      for (const [k, d] of Object.entries(saved)) {
        if (d) Object.defineProperty(globalThis, k, d);
        else delete (globalThis as Record<string, unknown>)[k];
      }
    },
  };
}

interface SignInModule {
  signInConfig(): Promise<Record<string, string> | null>;
  beginSignIn(config: Record<string, string>): Promise<void>;
  finishSignIn(config: Record<string, string> | null): Promise<boolean>;
  accessToken(config: Record<string, string>, force?: boolean): Promise<string | null>;
}

it("the dashboard's own sign-in code: to the provider with PKCE and back, tokens in sessionStorage, refreshed through the API", async () => {
  const browser = pageAt(base);
  try {
    const signIn = (await import(
      pathToFileURL(path.join(ROOT, "src/dashboard/public/sign-in.js")).href
    )) as SignInModule;
    const config = (await signIn.signInConfig())!;
    await signIn.beginSignIn(config);
    const asked = new URL(browser.page.assigned!);
    expect(asked.searchParams.get("code_challenge_method")).toBe("S256");
    expect(asked.searchParams.get("redirect_uri")).toBe(`${base}/`);
    expect(asked.searchParams.get("resource")).toBe(provider.audience);

    const back = await walkProviderPages(asked.toString(), { login: "alice", stopAt: `${base}/` });
    browser.page.location.href = back.url;
    expect(await signIn.finishSignIn(config)).toBe(true);
    expect(browser.page.location.href).toBe(`${base}/`); // the code left the address
    const token = (await signIn.accessToken(config))!;
    expect(jwtPayload(token)).toMatchObject({ sub: "alice", aud: provider.audience });
    expect([...browser.store.keys()]).toEqual(["fleetq.session"]);

    const renewed = await signIn.accessToken(config, true);
    expect(renewed).not.toBe(token);
    expect(jwtPayload(renewed!)).toMatchObject({ sub: "alice" });

    // The same answer again: no sign-in of this page is waiting for it.
    browser.page.location.href = back.url;
    await expect(signIn.finishSignIn(config)).rejects.toThrow("not the one this page asked for");
  } finally {
    browser.restore();
  }
}, 60_000);
