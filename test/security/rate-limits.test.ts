// Per-token limits over real HTTP and WebSocket: a token's bucket of cost points refuses what it
// cannot pay (429, Retry-After, RATE_LIMITED with cost / remaining / retryAfter) and runs none of
// it, refills over time, belongs to one token only; a token's operations in flight are capped.
import http from "node:http";
import { parse } from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { operationCost } from "../../src/api/query-cost.js";
import { DEFAULT_RATE_LIMITS, RateLimiter } from "../../src/api/rate-limit.js";
import { buildSchema } from "../../src/api/schema.js";
import { rateLimitsFromEnv } from "../../src/cli/api-options.js";
import { ApiClient } from "../../src/cli/client/api-client.js";
import { gqlOk, registerClusterWithAgent, startTestApi, type TestApi, wsClient } from "../helpers/api.js";

const PER_SECOND = 5_000;
let t: TestApi;

beforeAll(async () => {
  t = await startTestApi({
    rateLimits: {
      user: { burst: 20_000, perSecond: PER_SECOND, concurrent: 2 },
      admin: { burst: 200_000, perSecond: 100_000, concurrent: 64 },
      agent: { burst: 200_000, perSecond: 100_000, concurrent: 64 },
    },
  });
  await gqlOk(t.url, t.adminToken, `mutation { createQueue(input: { name: "team" }) { name } }`);
});
afterAll(async () => t?.close());

const token = async (name: string, role: "MEMBER" | "VIEWER") =>
  (
    await gqlOk<{ createToken: { secret: string } }>(
      t.url,
      t.adminToken,
      "mutation($n: String!, $r: Role!, $q: [String!]) { createToken(input: { name: $n, role: $r, queues: $q }) { secret } }",
      { n: name, r: role, q: role === "MEMBER" ? ["team"] : null },
    )
  ).createToken.secret;

/** With { n: 6 }: about 18,000 points (a job's pods, events and BindRequests: 100 rows of 10 points
 * each), most of a 20,000 bucket. */
const HEAVY = `query($n: Int) { jobs(first: $n) { edges { node { id pods { name } events { id } bindRequests { id } } } } }`;
/** About 9,000 points. */
const SUBMIT = `mutation($i: SubmitJobInput!) { submitJob(input: $i) { id ${["a", "b", "c"]
  .map(
    (x) =>
      `${x}p: pods(first: 100) { name } ${x}e: events(first: 100) { id } ${x}b: bindRequests(first: 100) { id }`,
  )
  .join(" ")} } }`;
const schema = buildSchema();
const costOf = (query: string, variables: Record<string, unknown>) =>
  operationCost(schema, parse(query), null, variables);

async function post(secret: string, query: string, variables: Record<string, unknown> = {}) {
  const res = await fetch(t.url, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${secret}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as {
    data?: unknown;
    errors?: { message: string; extensions?: Record<string, unknown> }[];
  };
  return { status: res.status, retryAfter: res.headers.get("retry-after"), ...body };
}

describe("a token's bucket of cost points", () => {
  it("refuses an operation costing more than is left, at once, and runs none of it", async () => {
    const member = await token("m", "MEMBER");
    const heavy = costOf(HEAVY, { n: 6 });
    expect(heavy).toBeGreaterThan(15_000);
    expect((await post(member, HEAVY, { n: 6 })).errors).toBeUndefined();

    const input = {
      name: "refused",
      queue: "team",
      tasks: [{ name: "w", replicas: 1, resources: { cpu: 100 } }],
    };
    const submit = costOf(SUBMIT, { i: input });
    const refused = await post(member, SUBMIT, { i: input });
    expect(refused.status).toBe(429);
    expect(refused.data ?? null).toBeNull();
    const ext = refused.errors?.[0]?.extensions;
    expect(ext).toMatchObject({ code: "RATE_LIMITED", cost: submit, limit: 20_000, perSecond: PER_SECOND });
    expect(ext?.remaining).toBeGreaterThanOrEqual(20_000 - heavy);
    expect(ext?.remaining).toBeLessThan(submit);
    expect(ext?.retryAfter).toBe(Math.ceil((submit - (ext?.remaining as number)) / PER_SECOND));
    expect(refused.retryAfter).toBe(String(ext?.retryAfter));
    expect(refused.errors?.[0]?.message).toMatch(/costs \d+ points and the token has \d+ left/);
    // Nothing was submitted.
    const jobs = await gqlOk<{ jobs: { edges: { node: { name: string } }[] } }>(
      t.url,
      t.adminToken,
      "{ jobs(first: 10) { edges { node { name } } } }",
    );
    expect(jobs.jobs.edges.map((e) => e.node.name)).not.toContain("refused");
  });

  it("refills over time: the refused operation passes after retryAfter seconds", async () => {
    const viewer = await token("v-refill", "VIEWER");
    expect((await post(viewer, HEAVY, { n: 6 })).errors).toBeUndefined();
    const refused = await post(viewer, HEAVY, { n: 6 });
    expect(refused.errors?.[0]?.extensions?.code).toBe("RATE_LIMITED");
    const wait = refused.errors?.[0]?.extensions?.retryAfter as number;
    expect(wait).toBeGreaterThanOrEqual(1);
    await new Promise((r) => setTimeout(r, wait * 1000 + 50));
    expect((await post(viewer, HEAVY, { n: 6 })).errors).toBeUndefined();
  });

  it("until the retryAfter of a refusal, the token's requests are refused unread", async () => {
    const viewer = await token("v-held", "VIEWER");
    expect((await post(viewer, HEAVY, { n: 6 })).errors).toBeUndefined();
    const refused = await post(viewer, HEAVY, { n: 6 });
    expect(refused.errors?.[0]?.extensions?.cost).toBe(costOf(HEAVY, { n: 6 }));
    // A cheap query would fit in what is left, but the token is refused until then.
    const held = await post(viewer, "{ me { name } }");
    expect(held.status).toBe(429);
    expect(held.errors?.[0]?.extensions).toMatchObject({ code: "RATE_LIMITED", held: true });
    expect(held.errors?.[0]?.extensions?.cost).toBeUndefined();
    expect(Number(held.retryAfter)).toBeGreaterThanOrEqual(1);
    expect((await post(await token("v-held-other", "VIEWER"), "{ me { name } }")).errors).toBeUndefined();
  });

  it("a client that does not wait gets its refusals no sooner than a second apart", async () => {
    const viewer = await token("v-flood", "VIEWER");
    expect((await post(viewer, HEAVY, { n: 6 })).errors).toBeUndefined();
    expect((await post(viewer, HEAVY, { n: 6 })).status).toBe(429);
    const started = Date.now();
    const [a, b] = await Promise.all([post(viewer, HEAVY, { n: 6 }), post(viewer, "{ me { name } }")]);
    const elapsed = Date.now() - started;
    for (const r of [a, b])
      expect(r.errors?.[0]?.extensions).toMatchObject({ code: "RATE_LIMITED", held: true });
    expect(elapsed).toBeGreaterThanOrEqual(900);
    expect(elapsed).toBeLessThan(3_000);
    // Meanwhile they count as the token's operations in flight (2 here): a third is refused at once.
    const third = post(viewer, "{ me { name } }");
    const fourth = post(viewer, "{ me { name } }");
    await new Promise((r) => setTimeout(r, 100));
    const t0 = Date.now();
    expect((await post(viewer, "{ me { name } }")).errors?.[0]?.extensions).toMatchObject({ concurrent: 2 });
    expect(Date.now() - t0).toBeLessThan(500);
    await Promise.all([third, fourth]);
  });

  it("the CLI waits the retryAfter of a refusal and sends the operation again", async () => {
    const viewer = await token("v-cli", "VIEWER");
    const client = new ApiClient({ url: t.url, token: viewer });
    await client.request(HEAVY, { n: 6 });
    const started = Date.now();
    await client.request(HEAVY, { n: 6 }); // refused first, then answered
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
  });

  it("is the token's own: another token is unaffected", async () => {
    const a = await token("v-a", "VIEWER");
    const b = await token("v-b", "VIEWER");
    expect((await post(a, HEAVY, { n: 6 })).errors).toBeUndefined();
    expect((await post(a, HEAVY, { n: 6 })).status).toBe(429);
    expect((await post(b, HEAVY, { n: 6 })).errors).toBeUndefined();
    // AGENT tokens have their own, larger budget.
    const agent = await registerClusterWithAgent(t, "c1");
    for (let i = 0; i < 3; i++) expect((await post(agent, HEAVY, { n: 6 })).errors).toBeUndefined();
  });

  it("applies over WebSocket too", async () => {
    const viewer = await token("v-ws", "VIEWER");
    const client = wsClient(t.url, viewer);
    const run = () =>
      new Promise<{ errors?: readonly { extensions?: Record<string, unknown> }[] }>((resolve, reject) => {
        let result: { errors?: readonly { extensions?: Record<string, unknown> }[] } = {};
        client.subscribe(
          { query: HEAVY, variables: { n: 6 } },
          {
            next: (r) => {
              result = r as typeof result;
            },
            error: reject,
            complete: () => resolve(result),
          },
        );
      });
    try {
      expect((await run()).errors).toBeUndefined();
      const refused = await run();
      expect(refused.errors?.[0]?.extensions).toMatchObject({
        code: "RATE_LIMITED",
        cost: costOf(HEAVY, { n: 6 }),
      });
      expect(refused.errors?.[0]?.extensions?.retryAfter).toBeGreaterThanOrEqual(1);
    } finally {
      await client.dispose();
    }
  });
});

describe("a token's operations in flight", () => {
  /** A request whose body never finishes: it stays in flight until destroyed. */
  function hold(secret: string): http.ClientRequest {
    const req = http.request(t.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "content-length": "1000",
        authorization: `Bearer ${secret}`,
      },
    });
    req.on("error", () => {});
    req.write("{");
    return req;
  }

  it("are capped: one more is refused at once with 429, and passes once one has finished", async () => {
    const viewer = await token("v-conc", "VIEWER");
    const other = await token("v-other", "VIEWER");
    const held = [hold(viewer), hold(viewer)];
    try {
      await new Promise((r) => setTimeout(r, 200)); // both reached the server
      const refused = await post(viewer, "{ me { name } }");
      expect(refused.status).toBe(429);
      expect(refused.retryAfter).toBe("1");
      expect(refused.errors?.[0]?.extensions).toMatchObject({
        code: "RATE_LIMITED",
        concurrent: 2,
        retryAfter: 1,
      });
      expect((await post(other, "{ me { name } }")).errors).toBeUndefined();
    } finally {
      for (const r of held) r.destroy();
    }
    await new Promise((r) => setTimeout(r, 200));
    expect((await post(viewer, "{ me { name } }")).errors).toBeUndefined();
  });
});

describe("a token's heavy operations", () => {
  const principal = (tokenId: string) => ({
    tokenId,
    name: tokenId,
    role: "VIEWER",
    queues: [],
    cluster: null,
  });

  it("run one at a time, in the order they came; another token's do not wait", async () => {
    const limiter = new RateLimiter();
    const order: string[] = [];
    const a1 = await limiter.heavyTurn(principal("a") as never);
    const a2 = limiter.heavyTurn(principal("a") as never).then((done) => {
      order.push("a2");
      return done;
    });
    const a3 = limiter.heavyTurn(principal("a") as never).then((done) => {
      order.push("a3");
      done();
    });
    (await limiter.heavyTurn(principal("b") as never))();
    await new Promise((r) => setTimeout(r, 20));
    expect(order).toEqual([]);
    a1();
    (await a2)();
    await a3;
    expect(order).toEqual(["a2", "a3"]);
  });

  it("over HTTP and WebSocket, heavy queries sent together are all answered", async () => {
    const viewer = await token("v-heavy", "VIEWER");
    const agent = await registerClusterWithAgent(t, "c-heavy");
    const answers = await Promise.all([post(agent, HEAVY, { n: 6 }), post(agent, HEAVY, { n: 6 })]);
    for (const r of answers) expect(r.errors).toBeUndefined();
    const client = wsClient(t.url, viewer);
    try {
      const run = () =>
        new Promise<unknown>((resolve, reject) => {
          let result: unknown;
          client.subscribe(
            {
              query: "query($n: Int) { jobs(first: $n) { edges { node { id pods(first: 500) { name } } } } }",
              variables: { n: 1 },
            },
            {
              next: (r) => {
                result = r;
              },
              error: reject,
              complete: () => resolve(result),
            },
          );
        });
      const [x, y] = (await Promise.all([run(), run()])) as { errors?: unknown }[];
      expect(x?.errors).toBeUndefined();
      expect(y?.errors).toBeUndefined();
    } finally {
      await client.dispose();
    }
  });
});

describe("settings", () => {
  it("come from the environment, with the defaults where unset, and bad values are refused", () => {
    expect(rateLimitsFromEnv({})).toEqual(DEFAULT_RATE_LIMITS);
    const set = rateLimitsFromEnv({
      FLEETQ_API_RATE: "2000",
      FLEETQ_API_CONCURRENCY: "4",
      FLEETQ_API_AGENT_RATE: "0",
    });
    expect(set.user).toEqual({ ...DEFAULT_RATE_LIMITS.user, perSecond: 2000, concurrent: 4 });
    expect(set.agent.perSecond).toBe(0);
    expect(() => rateLimitsFromEnv({ FLEETQ_API_BURST: "100" })).toThrow(
      /FLEETQ_API_BURST must be at least 20000/,
    );
    expect(() => rateLimitsFromEnv({ FLEETQ_API_RATE: "-1" })).toThrow(/FLEETQ_API_RATE must be 0 or more/);
    expect(() => rateLimitsFromEnv({ FLEETQ_API_AGENT_CONCURRENCY: "many" })).toThrow(
      /FLEETQ_API_AGENT_CONCURRENCY/,
    );
  });
});
