// The executable schema: schema.graphql (the contract, at the repository root) + the resolvers.
// Refuses to build if a root field has no guarded resolver: no field can run unchecked.
import fs from "node:fs";
import path from "node:path";
import { makeExecutableSchema } from "@graphql-tools/schema";
import type { GraphQLSchema } from "graphql";
import { isGuarded } from "./auth.js";
import { agentResolvers } from "./resolvers/agent.js";
import { clusterResolvers } from "./resolvers/clusters.js";
import { estimateResolvers } from "./resolvers/estimates.js";
import { fairShareResolvers } from "./resolvers/fair-share.js";
import { jobResolvers } from "./resolvers/jobs.js";
import { queueResolvers } from "./resolvers/queues.js";
import { Bytes, JSONScalar } from "./resolvers/scalars.js";
import { subscriptionResolvers } from "./resolvers/subscriptions.js";
import { tokenResolvers } from "./resolvers/tokens.js";
import { roleBindingResolvers } from "./resolvers/role-bindings.js";
import { webhookResolvers } from "./resolvers/webhooks.js";
import { whatIfResolvers } from "./resolvers/what-if.js";
import { logResolvers } from "./resolvers/logs.js";
import { usageResolvers } from "./resolvers/usage.js";
import { dryRunResolvers } from "./resolvers/dry-run.js";

/** schema.graphql, found by walking up from this file (works from src/ and from a build in dist/). */
export function readSchemaSource(): string {
  for (let dir = import.meta.dirname; ; dir = path.dirname(dir)) {
    const file = path.join(dir, "schema.graphql");
    if (fs.existsSync(file)) return fs.readFileSync(file, "utf8");
    if (path.dirname(dir) === dir) throw new Error(`schema.graphql not found above ${import.meta.dirname}`);
  }
}

type ResolverMap = Record<string, Record<string, unknown>>;

function merge(...maps: ResolverMap[]): ResolverMap {
  const out: ResolverMap = {};
  for (const m of maps) {
    for (const [type, fields] of Object.entries(m)) {
      for (const name of Object.keys(fields)) {
        if (out[type]?.[name]) throw new Error(`resolver ${type}.${name} defined twice`);
      }
      out[type] = { ...out[type], ...fields };
    }
  }
  return out;
}

export const resolvers = merge(
  { Bytes, JSON: JSONScalar } as unknown as ResolverMap,
  tokenResolvers,
  roleBindingResolvers,
  webhookResolvers,
  queueResolvers,
  clusterResolvers,
  jobResolvers,
  fairShareResolvers,
  agentResolvers,
  subscriptionResolvers,
  whatIfResolvers,
  estimateResolvers,
  logResolvers,
  usageResolvers,
  dryRunResolvers,
);

export function buildSchema(): GraphQLSchema {
  const schema = makeExecutableSchema({ typeDefs: readSchemaSource(), resolvers });
  for (const root of [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()]) {
    if (!root) continue;
    for (const name of Object.keys(root.getFields())) {
      const r = resolvers[root.name]?.[name] as { subscribe?: unknown } | undefined;
      const resolver = root === schema.getSubscriptionType() ? r?.subscribe : r;
      if (!isGuarded(resolver)) throw new Error(`${root.name}.${name} has no guarded resolver`);
    }
  }
  return schema;
}
