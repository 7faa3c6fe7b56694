// Redis keys and channels of one test run: a unique prefix, so concurrent runs never meet.
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { DEFAULT_REDIS_URL } from "../../src/protocol/defaults.js";

export const TEST_REDIS_URL = process.env.FLEETQ_TEST_REDIS ?? DEFAULT_REDIS_URL;

/** e.g. "fleetq-test:3f9a1c2b:" — end-to-end unique per call. */
export function testRedisPrefix(label = "fleetq-test"): string {
  return `${label}:${randomBytes(4).toString("hex")}:`;
}

/** Delete every key under `prefix` (a test run's queues, outcomes, events) on `redis`, or on a connection of its own. */
export async function deleteTestKeys(prefix: string, redis?: Redis): Promise<void> {
  const conn = redis ?? new Redis(TEST_REDIS_URL);
  try {
    let cursor = "0";
    do {
      const [next, keys] = await conn.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
      if (keys.length) await conn.del(...keys);
      cursor = next;
    } while (cursor !== "0");
  } finally {
    if (!redis) conn.disconnect();
  }
}
