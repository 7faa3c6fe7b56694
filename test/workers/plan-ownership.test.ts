// The spread of clusters over live workers (planOwnership), without a database: workers look in
// any order, each taking or giving up what its plan says, until nothing moves. Every cluster then
// has exactly one owner and the workers' counts differ by at most one — from any start, as
// workers join and leave.
import { expect, it } from "vitest";
import { planOwnership, shareOf } from "../../workers/ownership/plan-ownership.js";
import { prng } from "../helpers/prng.js";

type Owners = Map<string, string | null>;

/** Rounds of looks (each worker in the given order) until a round changes nothing. */
function settle(workers: string[], owners: Owners, order: number[]): number {
  for (let round = 1; round <= 20; round++) {
    let moved = false;
    for (const i of order) {
      const w = workers[i % workers.length]!;
      const view = {
        workers: [...workers].sort(),
        clusters: [...owners].map(([name, owner]) => ({ name, owner })),
      };
      const held = new Set([...owners].filter(([, o]) => o === w).map(([c]) => c));
      const plan = planOwnership(w, view, held);
      for (const c of plan.release) owners.set(c, null);
      for (const c of plan.acquire) if (owners.get(c) === null) owners.set(c, w);
      moved ||= plan.release.length + plan.acquire.length > 0;
    }
    if (!moved) return round;
  }
  throw new Error("the spread never settled");
}

function expectEven(workers: string[], owners: Owners): void {
  const counts = workers.map((w) => [...owners.values()].filter((o) => o === w).length);
  expect([...owners.values()].every((o) => o !== null && workers.includes(o))).toBe(true);
  expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(1);
  for (const w of workers) expect(counts[workers.indexOf(w)]).toBe(shareOf(w, workers, owners.size));
}

it("spreads clusters evenly from any start, and again as workers join and leave", () => {
  for (let seed = 1; seed <= 300; seed++) {
    const r = prng(seed);
    const n = 1 + r.int(6);
    const c = r.int(26);
    const order = Array.from({ length: 1 + r.int(12) }, () => r.int(6));
    let workers = Array.from({ length: n }, (_, i) => `w${i}`);
    // Any start: each cluster owned by a random worker, or by none.
    const owners: Owners = new Map(
      Array.from({ length: c }, (_, i) => {
        const o = r.int(n + 1);
        return [`c${i}`, o === n ? null : workers[o]!];
      }),
    );
    const fullOrder = [...order, ...workers.keys()];
    settle(workers, owners, fullOrder);
    expectEven(workers, owners);
    // One more worker joins.
    workers = [...workers, "w9"];
    settle(workers, owners, [...fullOrder, n]);
    expectEven(workers, owners);
    // The first one leaves (its leases lapse or are released).
    const gone = workers[0]!;
    workers = workers.slice(1);
    for (const [cl, o] of owners) if (o === gone) owners.set(cl, null);
    settle(workers, owners, fullOrder);
    expectEven(workers, owners);
  }
});

it("gives ten clusters over three workers as 4, 3, 3 and moves only what it must when one joins", () => {
  const owners: Owners = new Map(Array.from({ length: 10 }, (_, i) => [`c${i}`, null]));
  settle(["a", "b", "c"], owners, [0, 1, 2]);
  expect(["a", "b", "c"].map((w) => [...owners.values()].filter((o) => o === w).length)).toEqual([4, 3, 3]);
  const before = new Map(owners);
  settle(["a", "b", "c", "d"], owners, [0, 1, 2, 3]);
  const moved = [...owners].filter(([c, o]) => before.get(c) !== o).length;
  // d's share is 2: two clusters move to it, no other cluster moves.
  expect(moved).toBe(2);
});
