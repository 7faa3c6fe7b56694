// The search cursors between cycles, in real Redis: kept per cluster, emptied when none is left,
// and never able to fail a cycle (unreadable or refused entries read as none).
import { Redis } from "ioredis";
import { pino } from "pino";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { SearchCursor } from "../../src/core/index.js";
import { SearchCursorStore } from "../../workers/cycle/search-cursor-store.js";
import { TEST_REDIS_URL, deleteTestKeys, testRedisPrefix } from "../helpers/redis.js";

const prefix = testRedisPrefix("fleetq-cursors");
let redis: Redis;
let store: SearchCursorStore;

const cursor: SearchCursor = {
  action: "reclaim",
  job: "j1",
  tasks: 4,
  prefix: 2,
  recordedVictims: [{ job: "v", pod: "v-0" }],
  afterScenarios: 3,
  lastVictim: "w",
  leftAt: 1_700_000_000_000,
};

beforeAll(() => {
  redis = new Redis(TEST_REDIS_URL);
  store = new SearchCursorStore(redis, prefix, pino({ level: "silent" }));
});
afterAll(async () => {
  await deleteTestKeys(prefix, redis);
  redis.disconnect();
});

it("keeps a cluster's cursors until a cycle leaves none", async () => {
  expect(await store.load("c1")).toEqual([]);
  await store.save("c1", [cursor]);
  expect(await store.load("c1")).toEqual([cursor]);
  expect(await store.load("c2")).toEqual([]);
  expect(await redis.ttl(`${prefix}search-cursors:c1`)).toBeGreaterThan(0);
  await store.save("c1", []);
  expect(await redis.exists(`${prefix}search-cursors:c1`)).toBe(0);
});

it("reads what it cannot use as no cursor at all", async () => {
  await redis.set(`${prefix}search-cursors:c1`, "{not json");
  expect(await store.load("c1")).toEqual([]);
  await redis.set(
    `${prefix}search-cursors:c1`,
    JSON.stringify([cursor, { ...cursor, job: "j2", prefix: 9 }]),
  );
  expect(await store.load("c1")).toEqual([cursor]);
});
