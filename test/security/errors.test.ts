// Errors tell a client what it did wrong and nothing of the server's insides: no stack traces in
// any GraphQL or HTTP error, and an unexpected failure answered with a generic message and a
// request id that the server logs with the real error (unless FLEETQ_DEBUG_ERRORS=1).
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { gql, startTestApi, type TestApi, wsClient } from "../helpers/api.js";
import { admin as pgAdmin } from "../helpers/db.js";

let t: TestApi;
/** A server as `fleetq serve` and `fleetq dev` run it: NODE_ENV unset (not "test", which
 * would hide stack traces by itself). */
async function startOutsideTests(): Promise<TestApi> {
  const env = process.env.NODE_ENV;
  delete process.env.NODE_ENV;
  try {
    return await startTestApi();
  } finally {
    process.env.NODE_ENV = env;
  }
}

beforeAll(async () => {
  t = await startOutsideTests();
});
afterAll(async () => t?.close());
afterEach(() => vi.restoreAllMocks());

/** Runs `fn` while the queue table is unreachable: every read of queues fails unexpectedly. */
async function withQueuesBroken<T>(api: TestApi, fn: () => Promise<T>): Promise<T> {
  await pgAdmin((c) => c.query("ALTER TABLE queue RENAME TO queue_unreachable"), api.db.url);
  try {
    return await fn();
  } finally {
    await pgAdmin((c) => c.query("ALTER TABLE queue_unreachable RENAME TO queue"), api.db.url);
  }
}

const INTERNAL_TEXT = /queue_unreachable|relation|does not exist|prisma|at .*\.ts/i;

describe("errors in the default mode", () => {
  it("an unexpected error over HTTP: a generic message and a request id, no stack trace; the server logs the real error", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    const r = await withQueuesBroken(t, () => gql(t.url, t.adminToken, "{ queues { name } }"));
    const e = r.errors?.[0] as { message: string; extensions: Record<string, unknown> };
    expect(e.extensions.code).toBe("INTERNAL_SERVER_ERROR");
    expect(e.extensions.stacktrace).toBeUndefined();
    expect(e.message).not.toMatch(INTERNAL_TEXT);
    const id = e.extensions.requestId as string;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(e.message).toContain(id);
    const line = logged.mock.calls.find((c) => c.some((a) => String(a).includes(id)));
    expect(line, "the server logs the request id with the error").toBeDefined();
    expect(line!.map((a) => (a instanceof Error ? `${a.message} ${a.stack}` : String(a))).join(" ")).toMatch(
      /queue/,
    );
  });

  it("an expected error carries its code and message but no stack trace", async () => {
    const r = await gql(t.url, t.adminToken, `{ job(id: "not-an-id") { id } }`);
    expect(r.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT" });
    expect(r.errors?.[0]?.extensions).not.toHaveProperty("stacktrace");
    const invalid = await gql(t.url, t.adminToken, "{ nosuchfield }");
    expect(invalid.errors?.[0]?.extensions).not.toHaveProperty("stacktrace");
  });

  it("a malformed body is a JSON error without a stack trace", async () => {
    const res = await fetch(t.url, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${t.adminToken}` },
      body: '{"query": ',
    });
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toMatch(/application\/json/);
    const text = await res.text();
    expect(text).not.toMatch(/ at |node_modules|<pre>/);
    expect(JSON.parse(text).errors[0].extensions.code).toBe("BAD_REQUEST");
  });

  it("an unexpected error over WebSocket: the same generic message and request id", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const client = wsClient(t.url, t.adminToken);
    try {
      const result = await withQueuesBroken(
        t,
        () =>
          new Promise<{ errors?: readonly { message: string; extensions?: Record<string, unknown> }[] }>(
            (resolve, reject) =>
              client.subscribe(
                { query: "{ queues { name } }" },
                { next: resolve, error: reject, complete: () => {} },
              ),
          ),
      );
      const e = result.errors?.[0];
      expect(e?.message).not.toMatch(INTERNAL_TEXT);
      expect(e?.extensions).toMatchObject({ code: "INTERNAL_SERVER_ERROR" });
      expect(e?.message).toContain(e?.extensions?.requestId as string);
    } finally {
      await client.dispose();
    }
  });
});

describe("FLEETQ_DEBUG_ERRORS=1", () => {
  it("keeps the real message and the stack trace", async () => {
    process.env.FLEETQ_DEBUG_ERRORS = "1";
    const debug = await startOutsideTests().finally(() => {
      delete process.env.FLEETQ_DEBUG_ERRORS;
    });
    vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const r = await withQueuesBroken(debug, () => gql(debug.url, debug.adminToken, "{ queues { name } }"));
      const e = r.errors?.[0] as { message: string; extensions: Record<string, unknown> };
      expect(e.message).toMatch(/queue/);
      expect(e.extensions.stacktrace).toBeDefined();
    } finally {
      await debug.close();
    }
  });
});
