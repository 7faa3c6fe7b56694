// Small collection helpers shared by the store and the API.

/** Items grouped by key, in their original order within each group. */
export function groupBy<T, K>(items: readonly T[], key: (t: T) => K): Map<K, T[]> {
  const out = new Map<K, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return out;
}

const natural = new Intl.Collator("en", { numeric: true });

/** Natural name order ("w-2" before "w-10"). One collator for all: `localeCompare` with options
 * builds one per call, which makes sorting a large page of pods slow. */
export const naturalCompare = (a: string, b: string): number => natural.compare(a, b);
