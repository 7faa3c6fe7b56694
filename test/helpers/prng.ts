// A small seeded generator (mulberry32) for random test sequences that a failure can replay.
import { seededRandom } from "../../src/core/index.js";

export interface Prng {
  next(): number;
  int(n: number): number;
  pick<T>(xs: readonly T[]): T;
}

export function prng(seed: number): Prng {
  const next = seededRandom(seed);
  return {
    next,
    int: (n) => Math.floor(next() * n),
    pick: (xs) => xs[Math.floor(next() * xs.length)]!,
  };
}
