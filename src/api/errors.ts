// GraphQL errors with the codes of the contract: UNAUTHENTICATED, FORBIDDEN, BAD_USER_INPUT (with
// `field`, the input path), NOT_FOUND, CONFLICT; and the translation of the store's typed errors.
import { randomUUID } from "node:crypto";
import { GraphQLError, type GraphQLFormattedError } from "graphql";
import { ConflictError, ForbiddenError, InvalidInputError, NotFoundError } from "../store/index.js";

const error = (code: string, message: string, extra: Record<string, unknown> = {}) =>
  new GraphQLError(message, { extensions: { code, ...extra } });

export const unauthenticated = () =>
  error("UNAUTHENTICATED", "a valid bearer token is required (Authorization: Bearer <token>)");
export const forbidden = (message: string) => error("FORBIDDEN", message);
export const badInput = (field: string, message: string) => error("BAD_USER_INPUT", message, { field });
export const notFound = (message: string, field?: string) =>
  error("NOT_FOUND", message, field ? { field } : {});
export const conflict = (message: string, field?: string) =>
  error("CONFLICT", message, field ? { field } : {});

/**
 * Maps a store error to its GraphQL error. `fieldPath` turns a path inside the operation's input
 * ("tasks[0].replicas") into the path of the GraphQL argument ("input.tasks[0].replicas").
 */
export function toGraphQLError(e: unknown, fieldPath: (field: string) => string): unknown {
  if (e instanceof InvalidInputError) {
    const field = fieldPath(e.field);
    return badInput(
      field,
      e.message.startsWith(`${e.field}: `) ? `${field}: ${e.message.slice(e.field.length + 2)}` : e.message,
    );
  }
  if (e instanceof NotFoundError) return notFound(e.message, e.field ? fieldPath(e.field) : undefined);
  if (e instanceof ConflictError) return conflict(e.message, e.field ? fieldPath(e.field) : undefined);
  if (e instanceof ForbiddenError)
    return error("FORBIDDEN", e.message, e.field ? { field: fieldPath(e.field) } : {});
  return e;
}

/** Field paths of an operation whose input is the GraphQL argument `input`. */
export const inInput = (field: string) => (field ? `input.${field}` : "input");
/** Field paths of a batch operation whose input is the GraphQL list argument `inputs`
 * ("[3].tasks[0]" → "inputs[3].tasks[0]"). */
export const inInputs = (field: string) =>
  field ? `inputs${field.startsWith("[") ? "" : "."}${field}` : "inputs";
/** Field paths of an operation whose input mirrors the GraphQL arguments. */
export const asArgs = (field: string) => field;

const VARIABLE = /^Variable "\$(\w+)" (?:got invalid value|of (?:required|non-null) type)/;
const AT_PATH = / at "([^"]+)"/;
const MISSING_FIELD = /Field "(\w+)" of required type "[^"]+" was not provided/;

/** GraphQL's own input errors (variable coercion) get `field` too, taken from the message:
 * the path inside the variable, and the missing field if that is the problem. */
export function formatError(formatted: GraphQLFormattedError): GraphQLFormattedError {
  if (formatted.extensions?.code !== "BAD_USER_INPUT" || formatted.extensions.field) return formatted;
  const variable = VARIABLE.exec(formatted.message)?.[1];
  if (!variable) return formatted;
  const base = AT_PATH.exec(formatted.message)?.[1] ?? variable;
  const missing = MISSING_FIELD.exec(formatted.message)?.[1];
  const field = missing ? `${base}.${missing}` : base;
  return { ...formatted, extensions: { ...formatted.extensions, field } };
}

/** FLEETQ_DEBUG_ERRORS=1: errors keep their stack traces and unexpected ones their own message
 * (for a developer's machine; never in production: they tell an attacker about the server). */
export const debugErrors = (env: NodeJS.ProcessEnv = process.env): boolean => env.FLEETQ_DEBUG_ERRORS === "1";

/** The answer to an unexpected failure: a generic message and a request id, which the server logs
 * with the real error so that an operator can find it. */
export function internalError(error: unknown): {
  message: string;
  extensions: { code: string; requestId: string };
} {
  const requestId = randomUUID();
  console.error(`fleetq api: internal error (request ${requestId}):`, error);
  return {
    message: `internal error (request ${requestId}; logged by the server)`,
    extensions: { code: "INTERNAL_SERVER_ERROR", requestId },
  };
}

/** An error as a client sees it (over HTTP and WebSocket alike): no stack trace, and for an
 * unexpected failure (no code of the contract, or INTERNAL_SERVER_ERROR) nothing of its own but a
 * request id; unless `debug`. */
export function clientError(
  formatted: GraphQLFormattedError,
  error: unknown,
  debug: boolean,
): GraphQLFormattedError {
  if (debug) return formatError(formatted);
  const { stacktrace: _stack, ...extensions } = formatted.extensions ?? {};
  const code = extensions.code;
  const original = (error as { originalError?: unknown } | null)?.originalError;
  const unexpected =
    code === "INTERNAL_SERVER_ERROR" ||
    (code === undefined && original != null && !(original instanceof GraphQLError));
  if (unexpected) {
    const { message, extensions: ext } = internalError(original ?? error);
    return { message, ...(formatted.path ? { path: formatted.path } : {}), extensions: ext };
  }
  return formatError({ ...formatted, extensions });
}
