// Redis keys and channels of one test run: a unique prefix, so concurrent runs never meet.
import { randomBytes } from "node:crypto";

export const TEST_REDIS_URL = process.env.FLEETQ_TEST_REDIS ?? "redis://127.0.0.1:6379";

/** e.g. "fleetq-test:3f9a1c2b:" — end-to-end unique per call. */
export function testRedisPrefix(label = "fleetq-test"): string {
  return `${label}:${randomBytes(4).toString("hex")}:`;
}
