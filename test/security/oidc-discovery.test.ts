// How the API talks to the identity provider: discovery is read once, and again after a failure
// (an outage at start does not disable sign-in for good); tokens naming keys the provider does
// not publish do not make the API fetch its key set again and again; a remembered token is not
// trusted past its expiry.
import { generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gql, gqlOk, startTestApi, type TestApi } from "../helpers/api.js";
import { startOidcProvider, type TestOidcProvider } from "../helpers/oidc-provider.js";

let idp: TestOidcProvider;
let t: TestApi;
const ME = "{ me { subject role } }";
const DISCOVERY = "/.well-known/openid-configuration";

beforeAll(async () => {
  idp = await startOidcProvider({ accounts: { alice: { groups: ["staff"] } } });
  t = await startTestApi({
    oidc: {
      issuer: idp.issuer,
      audience: idp.audience,
      clientId: "fleetq",
      scopes: "openid",
      claims: { subject: "sub", email: "email", groups: "groups" },
    },
    oidcVerifier: { discoveryRetryMs: 300, clockToleranceSeconds: 1 },
    authFailureLimit: { burst: 0, perSecond: 0 },
  });
  await gqlOk(
    t.url,
    t.adminToken,
    `mutation { createRoleBinding(input: { group: "staff", role: VIEWER }) { id } }`,
  );
}, 60_000);
afterAll(async () => {
  await t?.close();
  await idp?.close();
});

describe("the identity provider's discovery and keys", () => {
  it("an outage at first use is retried; once read, discovery is not read again", async () => {
    idp.setDown(true);
    const token = await idp.accessToken("alice");
    const r = await gql(t.url, token, ME);
    expect(r.errors?.[0]?.extensions?.code).toBe("UNAUTHENTICATED");
    expect(r.errors?.[0]?.message).toMatch(/discovery .* answered 503/);
    idp.setDown(false);
    await new Promise((res) => setTimeout(res, 400));
    expect(await gqlOk(t.url, token, ME)).toEqual({ me: { subject: "alice", role: "VIEWER" } });
    const read = idp.requests(DISCOVERY);
    for (let i = 0; i < 5; i++) await gqlOk(t.url, await idp.accessToken("alice"), ME);
    expect(idp.requests(DISCOVERY)).toBe(read);
  });

  it("tokens with keys the provider does not publish are refused without refetching its keys each time", async () => {
    const before = idp.requests("/jwks");
    const now = Math.floor(Date.now() / 1000);
    const { privateKey } = await generateKeyPair("RS256");
    for (let i = 0; i < 20; i++) {
      const kid = `forged-${i}`;
      const forged = await new SignJWT({ sub: "alice", groups: ["staff"] })
        .setProtectedHeader({ alg: "RS256", kid })
        .setIssuer(idp.issuer)
        .setAudience(idp.audience)
        .setIssuedAt(now)
        .setExpirationTime(now + 300)
        .sign(privateKey);
      const r = await gql(t.url, forged, ME);
      expect(r.errors?.[0]?.message).toMatch(/key the identity provider does not publish/);
    }
    expect(idp.requests("/jwks") - before).toBeLessThanOrEqual(1);
  });
});

describe("a remembered token", () => {
  it("is not trusted past its expiry, however often it is used", async () => {
    const token = await idp.accessToken("alice", { ttl: 7 });
    const until = Date.now() + 10_000;
    let last: string | undefined;
    while (Date.now() < until) {
      const r = await gql(t.url, token, ME);
      last = r.errors?.[0]?.message;
      await new Promise((res) => setTimeout(res, 500));
    }
    expect(last).toMatch(/expired/);
  }, 20_000);
});
