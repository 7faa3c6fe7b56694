// Who may call what. Every root field of the schema is declared with a policy through `guarded`
// (schema.ts refuses to start if one is missing), so no resolver runs unchecked.
import { type Actor, type Principal, personOf } from "../store/index.js";
import type { ApiContext } from "./context.js";
import { forbidden, notFound, toGraphQLError, unauthenticated } from "./errors.js";
import { GraphQLError } from "graphql";

export type Policy<A> = (ctx: ApiContext, args: A) => Promise<void> | void;

export function principalOf(ctx: ApiContext): Principal {
  if (ctx.principal) return ctx.principal;
  const r = ctx.authRefusal;
  throw r ? new GraphQLError(r.message, { extensions: { code: r.code } }) : unauthenticated();
}

/** Who is recorded as doing what the caller does: the person behind the token, else its name. */
export const actorOf = (ctx: ApiContext): Actor => ({ name: personOf(principalOf(ctx)) });

/** Any valid token: ADMIN, MEMBER, VIEWER or AGENT. */
export const anyRole: Policy<unknown> = (ctx) => void principalOf(ctx);

export const adminOnly: Policy<unknown> = (ctx) => {
  const p = principalOf(ctx);
  if (p.role !== "ADMIN") throw forbidden(`${p.role} token "${p.name}" may not do this: ADMIN only`);
};

/** The cluster's AGENT only (agent-only mutations). */
export const agentOf =
  <A>(cluster: (args: A) => string): Policy<A> =>
  (ctx, args) => {
    const p = principalOf(ctx);
    const c = cluster(args);
    if (p.role !== "AGENT")
      throw forbidden(`${p.role} token "${p.name}" may not report for a cluster: AGENT only`);
    if (p.cluster !== c) throw forbidden(`AGENT token "${p.name}" speaks for cluster ${p.cluster}, not ${c}`);
  };

/** ADMIN, or the cluster's AGENT. */
export const adminOrAgentOf =
  <A>(cluster: (args: A) => string): Policy<A> =>
  (ctx, args) => {
    const p = principalOf(ctx);
    if (p.role === "ADMIN") return;
    if (p.role === "AGENT" && p.cluster === cluster(args)) return;
    throw forbidden(
      `${p.role} token "${p.name}" may not do this for cluster ${cluster(args)}: ADMIN or that cluster's AGENT only`,
    );
  };

/** ADMIN, or a MEMBER whose queue subtrees contain the queue. A queue that does not exist is
 * NOT_FOUND for a MEMBER here (the store refuses it for every role, in the transaction that would
 * store the job); "" (no queue named) is the resolver's to explain. */
export async function requireQueueAccess(ctx: ApiContext, queue: string): Promise<void> {
  const p = principalOf(ctx);
  if (p.role === "ADMIN") return;
  if (p.role !== "MEMBER") throw forbidden(`${p.role} token "${p.name}" may not submit or cancel jobs`);
  const tree = await ctx.loaders.queueTree();
  if (!tree.has(queue)) {
    if (queue === "") return;
    throw notFound(`queue "${queue}" not found`);
  }
  if (!p.queues.some((root) => tree.isWithin(queue, root))) {
    throw forbidden(`MEMBER token "${p.name}" may use queues ${p.queues.join(", ")} and below, not ${queue}`);
  }
}

/** Pod templates can carry credentials (env, args): only ADMIN, MEMBERs whose queue subtrees
 * hold the job, and the AGENT of the cluster the job runs on (it creates the pods) see them. */
export async function maySeeTemplate(
  ctx: ApiContext,
  job: { queueName: string; clusterName: string | null },
): Promise<boolean> {
  const p = ctx.principal;
  if (!p) return false;
  if (p.role === "ADMIN") return true;
  if (p.role === "AGENT") return job.clusterName !== null && p.cluster === job.clusterName;
  if (p.role !== "MEMBER") return false;
  const tree = await ctx.loaders.queueTree();
  return p.queues.some((root) => tree.isWithin(job.queueName, root));
}

const GUARDED = Symbol("guarded");

export type RootResolver<A, R> = ((parent: unknown, args: A, ctx: ApiContext) => Promise<R>) & {
  [GUARDED]: true;
};

/**
 * A root field: the policy runs first; store errors become GraphQL errors with the argument's
 * field path (`fieldPath` maps a path inside the operation's input to one in the arguments).
 */
export function guarded<A, R>(
  policy: Policy<A>,
  fieldPath: (field: string) => string,
  resolve: (args: A, ctx: ApiContext) => Promise<R> | R,
): RootResolver<A, R> {
  const fn = async (_parent: unknown, args: A, ctx: ApiContext) => {
    await policy(ctx, args);
    try {
      return await resolve(args, ctx);
    } catch (e) {
      throw toGraphQLError(e, fieldPath);
    }
  };
  return Object.assign(fn, { [GUARDED]: true as const });
}

export const isGuarded = (f: unknown): boolean => typeof f === "function" && GUARDED in f;
