// A small strict validator for scenario documents: each check returns the value it was given
// (no copy) or throws ShapeError with the path of the first bad field. Hand-written rather than a
// schema library so that `fleetq simulate` loads little code and checks large scenarios
// quickly (docs/benchmarks.md, `bench:cli`); the types of valid documents are inferred from the checks.

/** A path inside the document: keys and array indices, outermost first. */
export type ShapePath = (string | number)[];

export class ShapeError extends Error {
  constructor(
    readonly path: ShapePath,
    readonly reason: string,
  ) {
    super(reason);
  }
}

/** Checks `value` at `path` (the array is the caller's: read it, never keep it). */
export type Check<T> = (value: unknown, path: ShapePath) => T;

export type Out<C> = C extends Check<infer T> ? T : never;

const kind = (v: unknown): string =>
  v === null
    ? "null"
    : Array.isArray(v)
      ? "array"
      : typeof v === "number" && !Number.isFinite(v)
        ? String(v)
        : typeof v;

const fail = (path: ShapePath, expected: string, v: unknown): never => {
  throw new ShapeError([...path], `expected ${expected}, got ${kind(v)}`);
};

export const num: Check<number> = (v, p) =>
  typeof v === "number" && Number.isFinite(v) ? v : fail(p, "a number", v);

export const str: Check<string> = (v, p) => (typeof v === "string" ? v : fail(p, "a string", v));

export const bool: Check<boolean> = (v, p) => (typeof v === "boolean" ? v : fail(p, "true or false", v));

export const anything: Check<unknown> = (v) => v;

/** The check, or undefined (absent). */
export const optional =
  <T>(c: Check<T>): Check<T | undefined> =>
  (v, p) =>
    v === undefined ? undefined : c(v, p);

/** The check, null or undefined. */
export const maybe =
  <T>(c: Check<T>): Check<T | null | undefined> =>
  (v, p) =>
    v === undefined || v === null ? v : c(v, p);

export function oneOf<const T extends readonly string[]>(values: T): Check<T[number]> {
  const allowed = new Set<string>(values);
  const expected = `expected one of ${values.join(", ")}`;
  return (v, p) => {
    if (typeof v === "string" && allowed.has(v)) return v as T[number];
    throw new ShapeError([...p], `${expected}: got ${typeof v === "string" ? JSON.stringify(v) : kind(v)}`);
  };
}

export function array<T>(item: Check<T>, opts: { min?: number } = {}): Check<T[]> {
  return (v, p) => {
    if (!Array.isArray(v)) return fail(p, "an array", v);
    if (opts.min !== undefined && v.length < opts.min)
      throw new ShapeError([...p], `expected at least ${opts.min} item(s), got ${v.length}`);
    for (let i = 0; i < v.length; i++) {
      p.push(i);
      item(v[i], p);
      p.pop();
    }
    return v as T[];
  };
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** An object of any keys, each value checked. */
export function record<T>(value: Check<T>): Check<Record<string, T>> {
  return (v, p) => {
    if (!isPlainObject(v)) return fail(p, "an object", v);
    for (const k in v) {
      p.push(k);
      value(v[k], p);
      p.pop();
    }
    return v as Record<string, T>;
  };
}

type Shape = Record<string, Check<unknown>>;
type OptionalKeys<S extends Shape> = { [K in keyof S]: undefined extends Out<S[K]> ? K : never }[keyof S];
type Simplify<T> = { [K in keyof T]: T[K] } & {};
export type ObjectOf<S extends Shape> = Simplify<
  { [K in Exclude<keyof S, OptionalKeys<S>>]: Out<S[K]> } & { [K in OptionalKeys<S>]?: Out<S[K]> }
>;

/** An object with exactly these keys (those whose check allows undefined may be absent). */
export function object<S extends Shape>(shape: S): Check<ObjectOf<S>> & { shape: S } {
  const keys = Object.keys(shape);
  const checks = keys.map((k) => shape[k]!);
  const index = new Map(keys.map((k, i) => [k, i]));
  /** Per key: its check refuses undefined (the key must be present); worked out on first use. */
  let required: boolean[] | null = null;
  let requiredCount = 0;
  const requiredKeys = (): boolean[] => {
    required = checks.map((c) => {
      try {
        c(undefined, []);
        return false;
      } catch (e) {
        if (!(e instanceof ShapeError)) throw e;
        return true;
      }
    });
    requiredCount = required.filter(Boolean).length;
    return required;
  };
  /** Every key of the shape in order, then unknown keys: the first bad field is the one reported. */
  const full = (v: Record<string, unknown>, p: ShapePath) => {
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i]!;
      const x = v[k];
      p.push(k);
      checks[i]!(x, p);
      p.pop();
    }
    const unknownKeys: string[] = [];
    for (const k in v) if (!Object.hasOwn(shape, k)) unknownKeys.push(k);
    if (unknownKeys.length) throw new ShapeError([...p], `unknown field(s) ${unknownKeys.join(", ")}`);
  };
  const check = (v: unknown, p: ShapePath) => {
    if (!isPlainObject(v)) return fail(p, "an object", v);
    // Only the keys present are checked (most of a large document's objects use few of their
    // fields); on any doubt the full check runs, so errors read the same.
    const depth = p.length;
    const req = required ?? requiredKeys();
    let present = 0;
    let ok = true;
    try {
      for (const k in v) {
        const i = index.get(k);
        if (i === undefined) {
          ok = false;
          break;
        }
        p.push(k);
        checks[i]!(v[k], p);
        p.pop();
        if (req[i]) present++;
      }
    } catch (e) {
      if (!(e instanceof ShapeError)) throw e;
      ok = false;
    }
    if (present < requiredCount) ok = false;
    if (!ok) {
      p.length = depth;
      full(v, p);
    }
    return v as ObjectOf<S>;
  };
  return Object.assign(check, { shape });
}

/** The first of the checks that accepts the value. */
export function either<A, B>(a: Check<A>, b: Check<B>, expected: string): Check<A | B> {
  return (v, p) => {
    const depth = p.length;
    for (const c of [a, b]) {
      try {
        return c(v, p);
      } catch (e) {
        if (!(e instanceof ShapeError)) throw e;
        p.length = depth;
      }
    }
    return fail(p, expected, v);
  };
}
