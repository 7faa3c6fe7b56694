// Ids are UUIDv7: the millisecond timestamp first (ids sort by creation time), the version and
// variant bits set, random bits elsewhere, never repeated.
import { describe, expect, it } from "vitest";
import { uuidv7 } from "../../src/store/ids.js";

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const timestampOf = (id: string) => Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16);

describe("uuidv7", () => {
  it("carries its 48-bit millisecond timestamp and the version and variant bits", () => {
    for (const now of [
      0,
      1,
      255,
      65_535,
      65_536,
      2 ** 32 - 1,
      2 ** 32,
      2 ** 40 + 12_345,
      2 ** 48 - 1,
      Date.now(),
    ]) {
      const id = uuidv7(now);
      expect(id).toMatch(UUID_V7);
      expect(timestampOf(id)).toBe(now);
    }
  });

  it("never repeats, across many refills of its random bytes, within one millisecond", () => {
    const ids = new Set(Array.from({ length: 20_000 }, () => uuidv7(42)));
    expect(ids.size).toBe(20_000);
  });

  it("sorts by creation time", () => {
    const ids = [1_700_000_000_000, 1_700_000_000_001, 1_700_000_065_536].map((t) => uuidv7(t));
    expect([...ids].sort()).toEqual(ids);
  });
});
