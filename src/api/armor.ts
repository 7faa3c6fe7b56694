// Limits on what one operation may ask (graphql-armor): depth, cost, aliases, directives, tokens.
// The same validation rules guard subscriptions over WebSocket, which Apollo's plugins do not see.
import type { ApolloServerPlugin } from "@apollo/server";
import { ApolloArmor } from "@escape.tech/graphql-armor";
import {
  type DocumentNode,
  type GraphQLSchema,
  specifiedRules,
  validate,
  type ValidationRule,
} from "graphql";
import type { ApiContext } from "./context.js";

export const QUERY_LIMITS = {
  maxDepth: 10,
  maxCost: 5000,
  maxAliases: 15,
  maxDirectives: 20,
  maxTokens: 5000,
};

export function armorProtection() {
  const armor = new ApolloArmor({
    maxDepth: { n: QUERY_LIMITS.maxDepth },
    costLimit: { maxCost: QUERY_LIMITS.maxCost },
    maxAliases: { n: QUERY_LIMITS.maxAliases },
    maxDirectives: { n: QUERY_LIMITS.maxDirectives },
    maxTokens: { n: QUERY_LIMITS.maxTokens },
    blockFieldSuggestion: { enabled: true },
  });
  const p = armor.protect();
  // graphql-armor's plugin type is written against a different module resolution (STACK.md).
  return { ...p, plugins: p.plugins as unknown as ApolloServerPlugin<ApiContext>[] };
}

/** graphql's validate with the armor rules added: for graphql-ws. */
export function armoredValidate(rules: readonly ValidationRule[]) {
  return (schema: GraphQLSchema, document: DocumentNode) =>
    validate(schema, document, [...specifiedRules, ...rules]);
}
