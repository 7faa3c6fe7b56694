// A store on a fresh test database (db.ts) publishing through the real Redis event bus under a
// unique prefix; `published` collects what a subscriber of that bus receives.
import { openDatabase, type Database } from "../../src/store/db.js";
import type { StoreEvent } from "../../src/store/events.js";
import { RedisEventBus } from "../../src/store/redis-events.js";
import { createStore, type Store } from "../../src/store/store.js";
import { createTestDatabase, type TestDatabase } from "./db.js";
import { TEST_REDIS_URL, testRedisPrefix } from "./redis.js";

export interface TestStore {
  store: Store;
  db: Database;
  testDb: TestDatabase;
  bus: RedisEventBus;
  /** Every event received from the bus so far, in order. */
  published: StoreEvent[];
  close(): Promise<void>;
}

export async function openTestStore(): Promise<TestStore> {
  const testDb = await createTestDatabase();
  const db = await openDatabase(testDb.url);
  const bus = new RedisEventBus(TEST_REDIS_URL, testRedisPrefix());
  const published: StoreEvent[] = [];
  await bus.listen((e) => published.push(e));
  return {
    store: createStore(db, bus),
    db,
    testDb,
    bus,
    published,
    close: async () => {
      await bus.close();
      await db.close();
      await testDb.drop();
    },
  };
}

/** Waits until `check` holds (events arrive asynchronously through Redis). */
export async function eventually<T>(check: () => T | undefined | false, timeoutMs = 5000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = check();
    if (v) return v;
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}
