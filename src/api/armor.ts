// Limits on what one operation may ask: depth, aliases, directives, tokens (graphql-armor), and
// cost (query-cost.ts: graphql-armor's cost ignores page sizes passed as variables and nested
// lists, so its own is off). The same rules guard subscriptions over WebSocket, which Apollo's
// plugins do not see.
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
import { checkedCost, type FleetSize } from "./query-cost.js";
import { HEAVY_OPERATION_COST, type RateLimiter, rateLimited } from "./rate-limit.js";

export const QUERY_LIMITS = {
  maxDepth: 10,
  maxAliases: 15,
  maxDirectives: 20,
  maxTokens: 5000,
};

export function armorProtection() {
  const armor = new ApolloArmor({
    maxDepth: { n: QUERY_LIMITS.maxDepth },
    costLimit: { enabled: false },
    maxAliases: { n: QUERY_LIMITS.maxAliases },
    maxDirectives: { n: QUERY_LIMITS.maxDirectives },
    maxTokens: { n: QUERY_LIMITS.maxTokens },
    blockFieldSuggestion: { enabled: true },
  });
  const p = armor.protect();
  // graphql-armor's plugin type is written against a different module resolution (STACK.md).
  return { ...p, plugins: p.plugins as unknown as ApolloServerPlugin<ApiContext>[] };
}

/** Refuses, before it runs, an operation costing more than MAX_QUERY_COST with its variables,
 * or more than its token has left (rate-limit.ts: 429 with Retry-After). */
export function costLimitPlugin(
  schema: GraphQLSchema,
  limiter?: RateLimiter,
  fleet?: () => FleetSize,
): ApolloServerPlugin<ApiContext> {
  return {
    requestDidStart: async () => {
      let finished: (() => void) | null = null;
      return {
        didResolveOperation: async ({ document, operationName, request, contextValue }) => {
          const { cost, refusal } = checkedCost(
            schema,
            document,
            operationName,
            request.variables,
            fleet?.(),
          );
          if (refusal) throw refusal;
          const principal = contextValue.principal;
          const limited = limiter && principal ? limiter.take(principal, cost) : null;
          if (limited) throw rateLimited(limited, true);
          if (limiter && principal && cost >= HEAVY_OPERATION_COST)
            finished = await limiter.heavyTurn(principal);
        },
        willSendResponse: async () => {
          finished?.();
        },
      };
    },
  };
}

/** graphql's validate with the armor rules added: for graphql-ws. */
export function armoredValidate(rules: readonly ValidationRule[]) {
  return (schema: GraphQLSchema, document: DocumentNode) =>
    validate(schema, document, [...specifiedRules, ...rules]);
}
