// A small seeded generator (mulberry32) for random test sequences that a failure can replay.
export interface Prng {
  next(): number;
  int(n: number): number;
  pick<T>(xs: readonly T[]): T;
}

export function prng(seed: number): Prng {
  let a = seed;
  const next = () => {
    a = (a + 0x6d2b79f5) | 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n) => Math.floor(next() * n),
    pick: (xs) => xs[Math.floor(next() * xs.length)]!,
  };
}
