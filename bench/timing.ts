// Shared by the core benchmarks: the median of runs and a wall-clock timer.

/** The median (the mean of the middle two for an even count). */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** `f`'s result and how long it took, in ms. */
export function time<T>(f: () => T): [number, T] {
  const t0 = performance.now();
  const r = f();
  return [performance.now() - t0, r];
}
