// Signing in with an identity provider: a real OpenID provider (oidc-provider, on loopback) signs
// JWT access tokens; the real API verifies them through the provider's discovery and JWKS, and
// the person's role bindings make their role. Bad tokens (expired, another audience, another
// issuer, unsigned, HMAC with the public key) are refused; a key rotation is followed.
import { createPublicKey } from "node:crypto";
import { importJWK, type JWK, type JWTPayload, SignJWT, UnsecuredJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OidcConfig } from "../../src/api/identity/oidc-config.js";
import { gql, gqlOk, startTestApi, type TestApi } from "../helpers/api.js";
import { sql } from "../helpers/db.js";
import { startOidcProvider, type TestOidcProvider } from "../helpers/oidc-provider.js";

let idp: TestOidcProvider;
let other: TestOidcProvider;
let t: TestApi;
let visionBinding: string;

const oidcConfig = (p: TestOidcProvider): OidcConfig => ({
  issuer: p.issuer,
  audience: p.audience,
  clientId: "fleetq",
  scopes: "openid email groups",
  claims: { subject: "sub", email: "email", groups: "groups" },
});

const admin = <T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>) =>
  gqlOk<T>(t.url, t.adminToken, query, variables);

const SUBMIT = `mutation($i: SubmitJobInput!) { submitJob(input: $i) { id submittedBy events { actor kind } } }`;
const submitTo = (token: string, queue: string) =>
  gql<{ submitJob: { id: string; submittedBy: string; events: { actor: string; kind: string }[] } }>(
    t.url,
    token,
    SUBMIT,
    {
      i: {
        name: `j-${Math.random().toString(36).slice(2)}`,
        queue,
        tasks: [{ name: "w", replicas: 1, resources: { gpu: 1 } }],
      },
    },
  );

const ME = "{ me { name role queues subject email } }";
const codeOf = (r: { errors?: { extensions?: { code?: string } }[] }) => r.errors?.[0]?.extensions?.code;

/** A token signed with the provider's own current key, with any claims (for bad tokens). */
async function craft(p: TestOidcProvider, claims: JWTPayload, alg = "RS256"): Promise<string> {
  const jwk = p.signingKey();
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ iss: p.issuer, aud: p.audience, sub: "alice", iat: now, exp: now + 300, ...claims })
    .setProtectedHeader({ alg, kid: jwk.kid, typ: "at+jwt" })
    .sign(await importJWK(jwk, alg));
}

beforeAll(async () => {
  idp = await startOidcProvider({
    accounts: {
      alice: { email: "alice@example.com", groups: ["ml-vision", "staff"] },
      nogroup: { email: "nobody@example.com" },
      sam: { groups: ["ml-llm"] },
    },
  });
  other = await startOidcProvider({
    accounts: { alice: { email: "alice@example.com", groups: ["ml-vision"] } },
  });
  t = await startTestApi({ oidc: oidcConfig(idp), oidcVerifier: { jwksCooldownMs: 0 } });
  for (const q of ["vision", "llm"])
    await admin(`mutation { createQueue(input: { name: "${q}" }) { name } }`);
  const b = await admin<{ createRoleBinding: { id: string } }>(
    `mutation { createRoleBinding(input: { group: "ml-vision", role: MEMBER, queues: ["vision"] }) { id } }`,
  );
  visionBinding = b.createRoleBinding.id;
}, 60_000);

afterAll(async () => {
  await t?.close();
  await idp?.close();
  await other?.close();
});

describe("a person signed in at the identity provider", () => {
  it("submits to the queues their group is bound to, as themselves, and nowhere else", async () => {
    const token = await idp.accessToken("alice");
    const me = await gqlOk<{ me: Record<string, unknown> }>(t.url, token, ME);
    expect(me.me).toEqual({
      name: "alice@example.com",
      role: "MEMBER",
      queues: ["vision"],
      subject: "alice",
      email: "alice@example.com",
    });
    const ok = await submitTo(token, "vision");
    expect(ok.errors).toBeUndefined();
    expect(ok.data!.submitJob.submittedBy).toBe("alice@example.com");
    expect(ok.data!.submitJob.events.map((e) => e.actor)).toContain("alice@example.com");
    const refused = await submitTo(token, "llm");
    expect(codeOf(refused)).toBe("FORBIDDEN");
  });

  it("is refused with a clear message when no role binding names them", async () => {
    const r = await gql(t.url, await idp.accessToken("nogroup"), ME);
    expect(codeOf(r)).toBe("FORBIDDEN");
    expect(r.errors![0]!.message).toMatch(/nobody@example\.com.*no role binding names you/);
  });

  it("gets a binding by subject (or e-mail) at once, and a union of bindings", async () => {
    const token = await idp.accessToken("sam");
    expect(codeOf(await gql(t.url, token, ME))).toBe("FORBIDDEN");
    await admin(
      `mutation { createRoleBinding(input: { subject: "sam", role: MEMBER, queues: ["llm"] }) { id } }`,
    );
    await admin(`mutation { createRoleBinding(input: { group: "ml-llm", role: VIEWER }) { id } }`);
    const me = await gqlOk<{ me: { role: string; queues: string[]; name: string } }>(t.url, token, ME);
    expect(me.me).toMatchObject({ role: "MEMBER", queues: ["llm"], name: "sam" });
    const ok = await submitTo(token, "llm");
    expect(ok.data?.submitJob.submittedBy).toBe("sam");
  });

  it("loses access as soon as the binding is deleted", async () => {
    const token = await idp.accessToken("alice");
    expect((await submitTo(token, "vision")).errors).toBeUndefined();
    expect(await admin(`mutation($id: ID!) { deleteRoleBinding(id: $id) }`, { id: visionBinding })).toEqual({
      deleteRoleBinding: true,
    });
    const after = await submitTo(token, "vision");
    expect(codeOf(after)).toBe("FORBIDDEN");
    expect(after.errors![0]!.message).toMatch(
      /no role binding names you or your groups \(ml-vision, staff\)/,
    );
    // Deleting it again: NOT_FOUND, nothing changes.
    const again = await gql(t.url, t.adminToken, `mutation($id: ID!) { deleteRoleBinding(id: $id) }`, {
      id: visionBinding,
    });
    expect(codeOf(again)).toBe("NOT_FOUND");
    const b = await admin<{ createRoleBinding: { id: string } }>(
      `mutation { createRoleBinding(input: { group: "ml-vision", role: MEMBER, queues: ["vision"] }) { id } }`,
    );
    visionBinding = b.createRoleBinding.id;
    expect((await submitTo(token, "vision")).errors).toBeUndefined();
  });
});

describe("an e-mail the provider has not verified", () => {
  it("matches no subject binding and is not the person's name", async () => {
    await admin(`mutation { createRoleBinding(input: { subject: "boss@example.com", role: ADMIN }) { id } }`);
    const forged = await craft(idp, { sub: "mallory", email: "boss@example.com", email_verified: false });
    const r = await gql(t.url, forged, ME);
    expect(codeOf(r)).toBe("FORBIDDEN");
    expect(r.errors![0]!.message).toMatch(/signed in as mallory, but no role binding names you/);
    const honest = await craft(idp, { sub: "boss", email: "boss@example.com", email_verified: true });
    expect((await gqlOk<{ me: { role: string } }>(t.url, honest, ME)).me.role).toBe("ADMIN");
  });
});

describe("every replica", () => {
  it("hears of a deleted binding at once, well before its principals would have expired", async () => {
    const replica = await t.replica();
    const token = await idp.accessToken("alice");
    const viaReplica = () =>
      gql<{ submitJob: { id: string } }>(replica.url, token, SUBMIT, {
        i: {
          name: `r-${Date.now()}`,
          queue: "vision",
          tasks: [{ name: "w", replicas: 1, resources: { gpu: 1 } }],
        },
      });
    expect((await viaReplica()).errors).toBeUndefined(); // remembered there now
    await admin(`mutation($id: ID!) { deleteRoleBinding(id: $id) }`, { id: visionBinding });
    const deleted = Date.now();
    let code: string | undefined;
    while (Date.now() - deleted < 4_000 && code !== "FORBIDDEN") code = codeOf(await viaReplica());
    expect(code).toBe("FORBIDDEN");
    expect(Date.now() - deleted).toBeLessThan(2_000);
    const b = await admin<{ createRoleBinding: { id: string } }>(
      `mutation { createRoleBinding(input: { group: "ml-vision", role: MEMBER, queues: ["vision"] }) { id } }`,
    );
    visionBinding = b.createRoleBinding.id;
  });
});

describe("tokens that are refused", () => {
  const refusedWith = async (token: string, reason: RegExp) => {
    const r = await gql(t.url, token, ME);
    expect(codeOf(r)).toBe("UNAUTHENTICATED");
    expect(r.errors![0]!.message).toMatch(reason);
    expect(r.data ?? null).toBeNull();
  };

  it("expired", async () => {
    const now = Math.floor(Date.now() / 1000);
    await refusedWith(await craft(idp, { iat: now - 600, exp: now - 120 }), /expired/);
  });

  it("without an expiry, or not valid yet", async () => {
    await refusedWith(await craft(idp, { exp: undefined }), /"exp" claim/);
    await refusedWith(await craft(idp, { nbf: Math.floor(Date.now() / 1000) + 600 }), /not valid yet/);
  });

  it("for another audience", async () => {
    await refusedWith(await idp.accessToken("alice", { audience: "https://elsewhere.test/api" }), /audience/);
  });

  it("from another issuer", async () => {
    // Signed by the other provider: its key is not the configured issuer's.
    await refusedWith(await other.accessToken("alice"), /key the identity provider does not publish/);
    // Signed with the configured provider's key but naming another issuer.
    await refusedWith(await craft(idp, { iss: other.issuer }), /another identity provider/);
  });

  it("unsigned (alg none) or HMAC-signed with the provider's public key", async () => {
    const now = Math.floor(Date.now() / 1000);
    const none = new UnsecuredJWT({ sub: "alice", groups: ["ml-vision"] })
      .setIssuer(idp.issuer)
      .setAudience(idp.audience)
      .setIssuedAt(now)
      .setExpirationTime(now + 300)
      .encode();
    await refusedWith(none, /algorithm is not allowed/);
    const {
      d: _d,
      p: _p,
      q: _q,
      dp: _dp,
      dq: _dq,
      qi: _qi,
      ...pub
    } = idp.signingKey() as JWK & Record<string, string>;
    const pem = createPublicKey({ key: pub as never, format: "jwk" }).export({ type: "spki", format: "pem" });
    const hs = await new SignJWT({ sub: "alice", groups: ["ml-vision"] })
      .setProtectedHeader({ alg: "HS256", kid: pub.kid })
      .setIssuer(idp.issuer)
      .setAudience(idp.audience)
      .setIssuedAt(now)
      .setExpirationTime(now + 300)
      .sign(new TextEncoder().encode(pem as string));
    await refusedWith(hs, /algorithm is not allowed/);
  });

  it("a token of the provider's new key is accepted after a key rotation", async () => {
    const before = await idp.accessToken("alice");
    expect(codeOf(await gql(t.url, before, ME))).toBeUndefined();
    await idp.rotateKeys();
    const after = await idp.accessToken("alice");
    const me = await gqlOk<{ me: { subject: string } }>(t.url, after, ME);
    expect(me.me.subject).toBe("alice");
  });
});

describe("role bindings: input", () => {
  const create = (input: Record<string, unknown>) =>
    gql(t.url, t.adminToken, `mutation($i: RoleBindingInput!) { createRoleBinding(input: $i) { id } }`, {
      i: input,
    });
  const count = async () =>
    (await admin<{ roleBindings: unknown[] }>("{ roleBindings { id } }")).roleBindings.length;

  it.each([
    [{ role: "VIEWER" }, "input.subject", /exactly one of subject or group/],
    [{ subject: "a", group: "g", role: "VIEWER" }, "input.subject", /exactly one/],
    [{ group: "g", role: "AGENT" }, "input.role", /AGENT/],
    [{ group: "g", role: "MEMBER" }, "input.queues", /needs the queues/],
    [{ group: "g", role: "MEMBER", queues: ["nope"] }, "input.queues[0]", /queue "nope" does not exist/],
    [{ group: "g", role: "VIEWER", queues: ["vision"] }, "input.queues", /only apply to MEMBER/],
    [{ group: "g", role: "VIEWER", cluster: "c1" }, "input.cluster", /not supported/],
  ])("%j is refused, naming %s", async (input, field, message) => {
    const before = await count();
    const r = await create(input);
    expect(codeOf(r)).toBe("BAD_USER_INPUT");
    expect(r.errors![0]!.extensions!.field).toBe(field);
    expect(r.errors![0]!.message).toMatch(message);
    expect(await count()).toBe(before);
  });

  it("is ADMIN only: a signed-in MEMBER may neither read nor change bindings", async () => {
    const token = await idp.accessToken("alice");
    expect(codeOf(await gql(t.url, token, "{ roleBindings { id } }"))).toBe("FORBIDDEN");
    expect(
      codeOf(
        await gql(t.url, token, `mutation { createRoleBinding(input: { group: "x", role: ADMIN }) { id } }`),
      ),
    ).toBe("FORBIDDEN");
  });

  it("is audited with its actor", async () => {
    await admin(`mutation { createRoleBinding(input: { group: "auditors", role: VIEWER }) { id } }`);
    const rows = await sql<{ message: string; actor: string }>(
      t.db.url,
      "SELECT message, actor FROM event WHERE kind = 'rolebinding.created'",
    );
    expect(rows.some((e) => e.message.includes("group auditors") && e.actor === "bootstrap-admin")).toBe(
      true,
    );
  });
});

describe("a static token bound to a person", () => {
  it("acts as that person; agents cannot be bound", async () => {
    const { createToken } = await admin<{ createToken: { secret: string } }>(
      `mutation { createToken(input: { name: "ci-dave", role: MEMBER, queues: ["vision"], subject: "dave@example.com" }) { secret } }`,
    );
    const me = await gqlOk<{ me: { name: string; subject: string } }>(t.url, createToken.secret, ME);
    expect(me.me).toMatchObject({ name: "ci-dave", subject: "dave@example.com" });
    const r = await submitTo(createToken.secret, "vision");
    expect(r.data?.submitJob.submittedBy).toBe("dave@example.com");
    const agent = await gql(
      t.url,
      t.adminToken,
      `mutation { createToken(input: { name: "a", role: AGENT, cluster: "c1", subject: "dave" }) { secret } }`,
    );
    expect(codeOf(agent)).toBe("BAD_USER_INPUT");
  });
});
