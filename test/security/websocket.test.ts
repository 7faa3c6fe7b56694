// WebSocket subscriptions: a token is needed to connect, revoking it closes its sockets, and a
// connection's payload size and number of subscriptions are capped.
import type { Client } from "graphql-ws";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WS_MAX_SUBSCRIPTIONS } from "../../src/api/server.js";
import { gqlOk, startTestApi, type TestApi, wsClient } from "../helpers/api.js";

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
