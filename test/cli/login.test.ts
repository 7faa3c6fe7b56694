// `fleetq login` by the device flow against a real OpenID provider (oidc-provider, in this
// process) named by a real API (GET /auth/config), the user code approved at the provider's own
// pages over HTTP; the tokens cached 0600 per API, refreshed when expired or refused, forgotten
// (and revoked) by `fleetq logout`; denied and expired codes end with their exit codes.
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { oidcConfigFromEnv } from "../../src/api/identity/oidc-config.js";
import { gql, gqlOk, startTestApi, type TestApi } from "../helpers/api.js";
import { walkProviderPages } from "../helpers/oidc-interactions.js";
import { startOidcProvider, type TestOidcProvider } from "../helpers/oidc-provider.js";
import { tempDir } from "../helpers/temp-dir.js";
import { type CliResult, runCli } from "./run-cli.js";

let provider: TestOidcProvider;
let api: TestApi;

beforeAll(async () => {
  provider = await startOidcProvider({ accounts: { alice: { email: "alice@example.com", groups: ["ml"] } } });
  api = await startTestApi({
    oidc: oidcConfigFromEnv({
      FLEETQ_OIDC_ISSUER: provider.issuer,
      FLEETQ_OIDC_AUDIENCE: provider.audience,
      FLEETQ_OIDC_CLIENT_ID: "fleetq",
    }),
  });
  // alice may read, by her group.
  await gqlOk(
    api.url,
    api.adminToken,
    'mutation { createRoleBinding(input: { group: "ml", role: VIEWER }) { id } }',
  );
});
afterAll(async () => {
  await api?.close();
  await provider?.close();
});

interface CacheFile {
  apis: Record<string, { accessToken: string; refreshToken?: string; expiresAt: number | null }>;
}

const cacheFile = (home: string) => path.join(home, "fleetq", "tokens.json");
const readCache = (home: string) => JSON.parse(readFileSync(cacheFile(home), "utf8")) as CacheFile;
const jwtPayload = (jwt: string) => JSON.parse(Buffer.from(jwt.split(".")[1]!, "base64url").toString());

/** `fleetq login` (more args given), with the person at the provider acting on the code it prints. */
async function login(
  home: string,
  act: (uri: string, code: string) => Promise<unknown>,
  args: string[] = [],
): Promise<CliResult> {
  let acting: Promise<unknown> | null = null;
  const result = await runCli(["login", ...args], {
    url: api.url,
    env: { XDG_CONFIG_HOME: home },
    onStderr: (all) => {
      const m = all.match(/open (\S+) and enter the code (\S+)/);
      if (m && !acting) acting = act(m[1]!, m[2]!);
    },
  });
  await acting;
  return result;
}

const cli = (home: string, args: string[]) => runCli(args, { url: api.url, env: { XDG_CONFIG_HOME: home } });

it("signs in by the device flow, keeps the tokens 0600 for this API, refreshes them and forgets them at logout", async () => {
  const home = tempDir("fleetq-login", "test");
  let page = "";
  const r = await login(home, async (uri, userCode) => {
    page = (await walkProviderPages(uri, { login: "alice", userCode })).html;
  });
  expect(r.stderr).toContain(`${provider.issuer}/device`);
  expect(r.stderr).toMatch(/or open http:\S+user_code=/);
  expect(r.stderr, r.stderr).toContain(`Signed in to ${api.url} as alice@example.com`);
  expect(r.code).toBe(0);
  expect(page).toContain("Sign-in Success");

  expect(statSync(cacheFile(home)).mode & 0o777).toBe(0o600);
  expect(statSync(path.dirname(cacheFile(home))).mode & 0o777).toBe(0o700);
  const first = readCache(home).apis[api.url]!;
  expect(first.refreshToken).toBeTruthy();
  expect(jwtPayload(first.accessToken)).toMatchObject({
    sub: "alice",
    aud: provider.audience,
    iss: provider.issuer,
  });
  // The token obtained is good at the API, directly and through the CLI.
  const me = await gql<{ me: { role: string } }>(api.url, first.accessToken, "{ me { name role } }");
  expect(me.data?.me.role, JSON.stringify(me.errors)).toBe("VIEWER");
  const who = await cli(home, ["whoami"]);
  expect(who.stdout, who.stderr).toMatch(/alice.*: VIEWER/);
  expect(who.stdout).toContain("person: alice <alice@example.com>");
  expect(who.code).toBe(0);

  // An expired access token is refreshed before the request and written back.
  const cache = readCache(home);
  cache.apis[api.url]!.expiresAt = Date.now() - 1000;
  writeFileSync(cacheFile(home), JSON.stringify(cache));
  expect((await cli(home, ["whoami"])).code).toBe(0);
  const refreshed = readCache(home).apis[api.url]!;
  expect(refreshed.accessToken).not.toBe(first.accessToken);
  expect(refreshed.expiresAt).toBeGreaterThan(Date.now());
  expect(statSync(cacheFile(home)).mode & 0o777).toBe(0o600);

  // An access token the API refuses is refreshed once, and the request sent again.
  const refused = readCache(home);
  refused.apis[api.url]!.accessToken = "not-a-token";
  writeFileSync(cacheFile(home), JSON.stringify(refused));
  const retried = await cli(home, ["get", "queues"]);
  expect(retried.stderr).toBe("");
  expect(retried.code).toBe(0);
  expect(readCache(home).apis[api.url]!.accessToken).toMatch(/^ey/);

  const signedIn = readCache(home).apis[api.url]!;
  const out = await cli(home, ["logout"]);
  expect(out.stderr).toContain(`Signed out of ${api.url}`);
  expect(out.code).toBe(0);
  expect(readCache(home).apis[api.url]).toBeUndefined();
  // The refresh token was revoked at the provider.
  const revoked = await fetch(`${provider.issuer}/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "refresh_token",
      refresh_token: signedIn.refreshToken!,
      client_id: "fleetq",
    }),
  });
  expect(((await revoked.json()) as { error?: string }).error).toBe("invalid_grant");

  const again = await cli(home, ["whoami"]);
  expect(again.code).toBe(3);
  expect(again.stderr).toContain("fleetq login");
}, 120_000);

it("a code denied at the provider ends the login with exit code 3", async () => {
  const home = tempDir("fleetq-login", "test");
  const r = await login(home, (uri, userCode) =>
    walkProviderPages(uri, { login: "alice", userCode, abort: true }),
  );
  expect(r.stderr).toContain("sign-in was denied at the identity provider");
  expect(r.code).toBe(3);
}, 60_000);

it("a code left unapproved expires with exit code 2; --issuer and --client-id name the provider", async () => {
  const short = await startOidcProvider({ configuration: { ttl: { DeviceCode: 2 } } });
  try {
    const home = tempDir("fleetq-login", "test");
    const r = await login(home, async () => {}, ["--issuer", short.issuer, "--client-id", "fleetq"]);
    expect(r.stderr).toContain(`${short.issuer}/device`);
    expect(r.stderr).toContain("the code expired before it was approved");
    expect(r.code).toBe(2);
  } finally {
    await short.close();
  }
}, 60_000);

it("an API without sign-in says so and names the flags", async () => {
  const plain = await startTestApi({ oidc: null });
  try {
    const home = tempDir("fleetq-login", "test");
    const r = await runCli(["login"], { url: plain.url, env: { XDG_CONFIG_HOME: home } });
    expect(r.stderr).toContain("has no sign-in with an identity provider configured");
    expect(r.stderr).toContain("--issuer and --client-id");
    expect(r.code).toBe(3);
  } finally {
    await plain.close();
  }
});

it("a token cache that is not fleetq's and an issuer that is not a URL are named, and nothing is sent", async () => {
  const home = tempDir("fleetq-login", "test");
  mkdirSync(path.dirname(cacheFile(home)), { recursive: true });
  writeFileSync(cacheFile(home), "not json");
  const r = await cli(home, ["whoami"]);
  expect(r.stderr).toContain(`token cache ${cacheFile(home)} is not what fleetq writes`);
  expect(r.code).toBe(3);
  expect(readFileSync(cacheFile(home), "utf8")).toBe("not json");

  const bad = await cli(tempDir("fleetq-login", "test"), [
    "login",
    "--issuer",
    "nope",
    "--client-id",
    "fleetq",
  ]);
  expect(bad.stderr).toContain('--issuer: "nope" is not a URL');
  expect(bad.code).toBe(3);
});
