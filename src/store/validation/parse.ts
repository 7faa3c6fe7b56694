// Turning a zod failure into the store's InvalidInputError: the first problem, with the path of
// the offending value ("tasks[0].resources.gpu") both as `field` and at the head of the message.
import type { z } from "zod";
import { ConflictError, ForbiddenError, InvalidInputError } from "../errors.js";

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/** `tasks[0].template.spec`; keys that are not identifiers in brackets: `limits["nvidia.com/gpu"]`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const p of path) {
    if (typeof p === "number") out += `[${p}]`;
    else if (!IDENTIFIER.test(String(p))) out += `[${JSON.stringify(String(p))}]`;
    else out += out ? `.${String(p)}` : String(p);
  }
  return out;
}

export function parseInput<S extends z.ZodType>(
  schema: S,
  value: unknown,
  prefix: readonly PropertyKey[] = [],
) {
  const r = schema.safeParse(value);
  if (r.success) return r.data as z.output<S>;
  const issue = r.error.issues[0]!;
  const extra = issue.code === "unrecognized_keys" ? [issue.keys[0]!] : [];
  const field = formatPath([...prefix, ...issue.path, ...extra]);
  const message = issue.code === "unrecognized_keys" ? "unknown field" : issue.message;
  throw new InvalidInputError(field, `${field || "input"}: ${message}`);
}

/** An error at a path the schema could not check by itself (e.g. a queue that does not exist). */
export function invalidAt(path: readonly PropertyKey[], message: string): InvalidInputError {
  const field = formatPath(path);
  return new InvalidInputError(field, `${field}: ${message}`);
}

/** The same refusal, one level down: an error about `tasks[0]` of the i-th input of a batch
 * becomes one about `[i].tasks[0]` (the caller's field path then names the list). */
export function errorAt<E extends Error>(e: E, prefix: readonly PropertyKey[]): E {
  const field = (e as { field?: string }).field;
  if (!(e instanceof InvalidInputError) && !(e instanceof ForbiddenError) && !(e instanceof ConflictError))
    return e;
  if (field === undefined) return e;
  const head = formatPath(prefix);
  const joined = !field ? head : field.startsWith("[") ? `${head}${field}` : `${head}.${field}`;
  const message = e.message.startsWith(`${field}: `)
    ? `${joined}: ${e.message.slice(field.length + 2)}`
    : e.message;
  if (e instanceof InvalidInputError) return new InvalidInputError(joined, message) as unknown as E;
  if (e instanceof ForbiddenError) return new ForbiddenError(message, joined) as unknown as E;
  return new ConflictError(message, joined) as unknown as E;
}
