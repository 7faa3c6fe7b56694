// /healthz answers while the process runs; /readyz only when PostgreSQL and Redis are reachable.
import { afterAll, beforeAll, expect, it } from "vitest";
import { createApiServer, type ApiServer } from "../../src/api/server.js";
import { createTestDatabase, type TestDatabase } from "../helpers/db.js";
import { TEST_REDIS_URL, testRedisPrefix } from "../helpers/redis.js";

let db: TestDatabase;
let up: ApiServer;
let noRedis: ApiServer;

const base = (s: ApiServer) => s.url.replace(/\/graphql$/, "");

beforeAll(async () => {
  db = await createTestDatabase();
  up = await createApiServer({
    databaseUrl: db.url,
    redisUrl: TEST_REDIS_URL,
    redisPrefix: testRedisPrefix(),
    port: 0,
    host: "127.0.0.1",
  });
  // Port 1 on localhost: nothing listens there, so Redis is unreachable.
  noRedis = await createApiServer({
    databaseUrl: db.url,
    redisUrl: "redis://127.0.0.1:1",
    redisPrefix: testRedisPrefix(),
    port: 0,
    host: "127.0.0.1",
  });
});
afterAll(async () => {
  await Promise.allSettled([up?.close(), noRedis?.close()]);
  await db?.drop();
});

it("healthz and readyz with everything reachable", async () => {
  const h = await fetch(`${base(up)}/healthz`);
  expect([h.status, await h.json()]).toEqual([200, { status: "ok" }]);
  const r = await fetch(`${base(up)}/readyz`);
  expect([r.status, await r.json()]).toEqual([200, { status: "ready", database: true, redis: true }]);
});

it("readyz says 503 and why when Redis is unreachable; healthz still answers", async () => {
  expect((await fetch(`${base(noRedis)}/healthz`)).status).toBe(200);
  const r = await fetch(`${base(noRedis)}/readyz`);
  expect([r.status, await r.json()]).toEqual([503, { status: "not ready", database: true, redis: false }]);
});
