// GraphQL errors with the codes of the contract: UNAUTHENTICATED, FORBIDDEN, BAD_USER_INPUT (with
// `field`, the input path), NOT_FOUND, CONFLICT; and the translation of the store's typed errors.
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
