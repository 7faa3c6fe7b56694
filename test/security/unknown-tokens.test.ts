// Bearers that match no token: remembered briefly (a client retrying one costs no database lookup
// each time), forgotten when a token is created, and failed authentications limited per client
// address (429 with Retry-After), while tokens the API already knows keep working.
import { createHash, randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gql, gqlOk, startTestApi, type TestApi } from "../helpers/api.js";
import { admin as pgAdmin } from "../helpers/db.js";

let t: TestApi;
const ME = "{ me { name } }";
const codeOf = (r: { errors?: { extensions?: { code?: string } }[] }) => r.errors?.[0]?.extensions?.code;
const newSecret = () => `fq_${randomBytes(24).toString("base64url")}`;

/** A token written straight into the database: no event, so no replica hears of it. */
const insertToken = (secret: string, name: string) =>
  pgAdmin(
    (c) =>
      c.query(
        "INSERT INTO api_token (id, name, role, secret_hash) VALUES (gen_random_uuid(), $1, 'VIEWER', $2)",
        [name, createHash("sha256").update(secret).digest("hex")],
      ),
    t.db.url,
  );

async function post(token: string, forwardedFor?: string) {
  const res = await fetch(t.url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${token}`,
      ...(forwardedFor ? { "x-forwarded-for": forwardedFor } : {}),
    },
    body: JSON.stringify({ query: ME }),
  });
  return {
    status: res.status,
    retryAfter: res.headers.get("retry-after"),
    body: (await res.json()) as never,
  };
}

beforeAll(async () => {
  t = await startTestApi({ authFailureLimit: { burst: 5, perSecond: 1 }, trustedProxies: "127.0.0.1" });
}, 60_000);
afterAll(() => t?.close());

describe("unknown bearer tokens", () => {
  it("are remembered briefly: a token appearing unannounced works a moment later", async () => {
    const secret = newSecret();
    expect(codeOf(await gql(t.url, secret, ME))).toBe("UNAUTHENTICATED");
    await insertToken(secret, "quiet");
    expect(codeOf(await gql(t.url, secret, ME))).toBe("UNAUTHENTICATED");
    await new Promise((r) => setTimeout(r, 2_000));
    expect(await gqlOk(t.url, secret, ME)).toEqual({ me: { name: "quiet" } });
  });

  it("are forgotten when a token is created", async () => {
    const secret = newSecret();
    expect(codeOf(await gql(t.url, secret, ME))).toBe("UNAUTHENTICATED");
    await insertToken(secret, "announced");
    await gqlOk(
      t.url,
      t.adminToken,
      `mutation { createToken(input: { name: "other", role: VIEWER }) { id } }`,
    );
    expect(await gqlOk(t.url, secret, ME)).toEqual({ me: { name: "announced" } });
  });

  it("fail at most the limit per address, then 429 with Retry-After; known tokens still pass", async () => {
    await new Promise((r) => setTimeout(r, 5_000)); // the earlier tests' failures given back
    await gqlOk(t.url, t.adminToken, ME); // known (remembered) before the flood
    for (let i = 0; i < 5; i++) expect((await post(newSecret())).status).toBe(200);
    const refused = await post(newSecret());
    expect(refused.status).toBe(429);
    expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
    const err = (refused.body as { errors: { message: string; extensions: { code: string } }[] }).errors[0]!;
    expect(err.extensions.code).toBe("RATE_LIMITED");
    expect(err.message).toMatch(/too many failed authentications/);
    expect(await gqlOk(t.url, t.adminToken, ME)).toEqual({ me: { name: "bootstrap-admin" } });
    await new Promise((r) => setTimeout(r, Number(refused.retryAfter) * 1000));
    expect((await post(newSecret())).status).toBe(200);
  });

  it("behind a trusted proxy, are counted per client its X-Forwarded-For names, not per proxy", async () => {
    for (let i = 0; i < 5; i++) expect((await post(newSecret(), "203.0.113.5")).status).toBe(200);
    expect((await post(newSecret(), "203.0.113.5")).status).toBe(429);
    // What the client itself wrote in front of the proxy's entry does not change who it is.
    expect((await post(newSecret(), "198.51.100.1, 203.0.113.5")).status).toBe(429);
    expect((await post(newSecret(), "203.0.113.6")).status).toBe(200);
  });
});
