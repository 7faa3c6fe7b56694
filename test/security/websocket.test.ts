// WebSocket subscriptions: a token is needed to connect, revoking it closes its sockets, a
// connection's payload size and number of subscriptions are capped, an open subscription counts
// among its token's operations in flight, and a token's connections are capped.
import { type Client, createClient } from "graphql-ws";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WS_MAX_SUBSCRIPTIONS, WS_TOO_MANY_CONNECTIONS } from "../../src/api/server.js";
import { gql, gqlOk, startTestApi, type TestApi, wsClient } from "../helpers/api.js";

let t: TestApi;
const clients: Client[] = [];

beforeAll(async () => {
  t = await startTestApi();
});
afterAll(async () => {
  for (const c of clients) await c.dispose();
  await t?.close();
});

/** Subscribes and resolves with how it ended: an error, a close, or still open after `waitMs`. */
function outcome(
  client: Client,
  query: string,
  waitMs = 1500,
): Promise<{ closed?: number; errors?: unknown[]; open?: true }> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve({ open: true }), waitMs);
    client.subscribe(
      { query },
      {
        next: (r) => {
          if (r.errors) {
            clearTimeout(timer);
            resolve({ errors: [...r.errors] });
          }
        },
        error: (e) => {
          clearTimeout(timer);
          const code = (e as { code?: number }).code;
          resolve(code !== undefined ? { closed: code } : { errors: Array.isArray(e) ? e : [e] });
        },
        complete: () => {},
      },
    );
  });
}

async function token(name: string): Promise<{ id: string; secret: string }> {
  return (
    await gqlOk<{ createToken: { id: string; secret: string } }>(
      t.url,
      t.adminToken,
      `mutation { createToken(input: { name: "${name}", role: VIEWER }) { id secret } }`,
    )
  ).createToken;
}

describe("websocket subscriptions", () => {
  it("a connection without a token is refused", async () => {
    const anonymous = wsClient(t.url, null);
    clients.push(anonymous);
    expect(await outcome(anonymous, "subscription { queueEvents { kind } }")).toEqual({ closed: 4403 });
  });

  it("revoking a token closes the sockets it opened", async () => {
    const v = await token("watcher");
    const client = wsClient(t.url, v.secret);
    clients.push(client);
    const ended = outcome(client, "subscription { queueEvents { kind } }", 10_000);
    await new Promise((r) => setTimeout(r, 500)); // subscribed
    await gqlOk(t.url, t.adminToken, `mutation { revokeToken(id: "${v.id}") }`);
    expect(await ended).toEqual({ closed: 4403 });
  });

  it("subscriptions per connection are capped", async () => {
    const v = await token("greedy");
    const client = wsClient(t.url, v.secret);
    clients.push(client);
    const all = [];
    for (let i = 0; i <= WS_MAX_SUBSCRIPTIONS; i++)
      all.push(outcome(client, "subscription { queueEvents { kind } }"));
    const results = await Promise.all(all);
    expect(results.filter((r) => r.open)).toHaveLength(WS_MAX_SUBSCRIPTIONS);
    expect(JSON.stringify(results.filter((r) => !r.open))).toMatch(/at most/);
  });

  it("an oversized message closes the socket", async () => {
    const ws = new WebSocket(t.url.replace(/^http/, "ws"), "graphql-transport-ws");
    await new Promise((r) => ws.once("open", r));
    const closed = new Promise<number>((r) => ws.once("close", (code) => r(code)));
    ws.send(
      JSON.stringify({
        type: "connection_init",
        payload: { authorization: `Bearer ${t.adminToken}`, pad: "x".repeat(2 * 1024 * 1024) },
      }),
    );
    expect(await closed).toBe(1009); // message too big
  });
});

describe("a token's subscriptions and connections", () => {
  const QUEUE_EVENTS = "subscription { queueEvents { kind } }";
  let limited: TestApi;
  let viewer = "";
  beforeAll(async () => {
    limited = await startTestApi({
      rateLimits: {
        user: { burst: 40_000, perSecond: 2_000, concurrent: 2, connections: 3 },
        admin: { burst: 200_000, perSecond: 50_000, concurrent: 128 },
        agent: { burst: 200_000, perSecond: 100_000, concurrent: 128 },
      },
    });
    viewer = (
      await gqlOk<{ createToken: { secret: string } }>(
        limited.url,
        limited.adminToken,
        `mutation { createToken(input: { name: "dash", role: VIEWER }) { secret } }`,
      )
    ).createToken.secret;
  });
  afterAll(async () => limited?.close());

  /** Opens a subscription; resolves with the function that completes it once it is running. */
  async function open(client: Client): Promise<() => void> {
    let stop = () => {};
    stop = client.subscribe({ query: QUEUE_EVENTS }, { next: () => {}, error: () => {}, complete: () => {} });
    await new Promise((r) => setTimeout(r, 300));
    return stop;
  }

  it("an open subscription counts among its token's operations in flight until it completes", async () => {
    const client = wsClient(limited.url, viewer);
    clients.push(client);
    const first = await open(client);
    await open(client);
    const refused = await gql(limited.url, viewer, "{ queues { name } }");
    expect(refused.status).toBe(429);
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: "RATE_LIMITED", concurrent: 2 });
    first();
    await new Promise((r) => setTimeout(r, 200));
    expect((await gql(limited.url, viewer, "{ queues { name } }")).status).toBe(200);
    await client.dispose();
    await new Promise((r) => setTimeout(r, 200));
    // Closing the socket ends its subscriptions: both places are free again.
    const again = wsClient(limited.url, viewer);
    clients.push(again);
    await open(again);
    expect((await gql(limited.url, viewer, "{ queues { name } }")).status).toBe(200);
    await again.dispose();
  });

  /** A client that connects at once and stays connected: resolves when connected or closed. */
  function eager(): {
    client: Client;
    settled: Promise<{ connected?: true; code?: number; reason?: string }>;
  } {
    const client = createClient({
      url: limited.url.replace(/^http/, "ws"),
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${viewer}` },
      lazy: false,
      retryAttempts: 0,
      onNonLazyError: () => {},
    });
    clients.push(client);
    const settled = new Promise<{ connected?: true; code?: number; reason?: string }>((resolve) => {
      client.on("connected", () => resolve({ connected: true }));
      client.on("closed", (e) => {
        const { code, reason } = e as { code: number; reason: string };
        resolve({ code, reason });
      });
    });
    return { client, settled };
  }

  it("a token's WebSocket connections are capped; the next is closed with a clear code and reason", async () => {
    await new Promise((r) => setTimeout(r, 200));
    const three = [0, 1, 2].map(() => eager());
    for (const c of three) expect(await c.settled).toEqual({ connected: true });
    const fourth = eager();
    const closed = await fourth.settled;
    expect(closed.code).toBe(WS_TOO_MANY_CONNECTIONS);
    expect(closed.reason).toMatch(/Too many connections: token "dash"/);
    await three[0]!.client.dispose();
    await new Promise((r) => setTimeout(r, 200));
    expect(await eager().settled).toEqual({ connected: true });
  });
});
