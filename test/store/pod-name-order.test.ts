// The snapshot orders a job's pods by name as a numeric collator does ("worker-9" before
// "worker-10"); names that differ only in the number that ends them take a shortcut. Both ways
// must give the same order: pairs of generated names, compared both ways.
import { expect, it } from "vitest";
import { podNameOrder } from "../../src/store/snapshot/map-rows.js";

const collator = new Intl.Collator("en", { numeric: true });
const HEADS = ["worker", "w", "a-1", "x1", "Worker", "worker-", "", "ü", "a_b", "0", "ps"];
const SEPARATORS = ["-", "", "_", "."];

/** A small deterministic generator (the same names on every run). */
function* names(seed: number, count: number): Generator<string> {
  let s = seed;
  const next = (n: number) => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s % n;
  };
  for (let k = 0; k < count; k++) {
    const numbers = [String(next(20)), String(next(200_000)), `0${next(10)}`, "", "007", String(next(3))];
    yield HEADS[next(HEADS.length)]! + SEPARATORS[next(SEPARATORS.length)]! + numbers[next(numbers.length)]!;
  }
}

it("orders pod names as the numeric collator does", () => {
  const list = [...names(7, 4000)];
  const mismatches: string[] = [];
  for (let i = 0; i + 1 < list.length; i++)
    for (const j of [i + 1, (i * 31) % list.length]) {
      const [a, b] = [list[i]!, list[j]!];
      if (Math.sign(podNameOrder(a, b)) !== Math.sign(collator.compare(a, b))) mismatches.push(`${a} / ${b}`);
    }
  expect(mismatches).toEqual([]);
  expect([...list].sort(podNameOrder)).toEqual([...list].sort((a, b) => collator.compare(a, b)));
});
