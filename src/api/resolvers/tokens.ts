// Who am I, and the tokens (ADMIN).
import { createToken, type CreateTokenInput, listTokens, revokeToken } from "../../store/index.js";
import { actorOf, adminOnly, anyRole, guarded, principalOf } from "../auth.js";
import type { ApiContext } from "../context.js";
import { asArgs, inInput } from "../errors.js";
import { iso } from "../views.js";

export const tokenResolvers = {
  Query: {
    me: guarded(anyRole, asArgs, (_a, ctx: ApiContext) => {
      const p = principalOf(ctx);
      return {
        name: p.name,
        role: p.role,
        queues: p.queues,
        cluster: p.cluster,
        subject: p.subject ?? null,
        email: p.email ?? null,
      };
    }),
    tokens: guarded(adminOnly, asArgs, async (_a, ctx: ApiContext) =>
      (await listTokens(ctx.store)).map((t) => ({
        id: t.id,
        name: t.name,
        role: t.role,
        queues: t.queues,
        cluster: t.clusterName,
        subject: t.subject,
        createdBy: t.createdBy,
        createdAt: iso(t.createdAt),
        revokedAt: iso(t.revokedAt),
      })),
    ),
  },
  Mutation: {
    createToken: guarded(adminOnly, inInput, async (a: { input: CreateTokenInput }, ctx) => {
      const created = await createToken(ctx.store, actorOf(ctx), a.input);
      // An unknown bearer is remembered briefly: the new token works here at once (other
      // replicas hear of it on the event bus).
      ctx.principals.clear();
      return created;
    }),
    revokeToken: guarded(adminOnly, asArgs, (a: { id: string }, ctx) =>
      revokeToken(ctx.store, actorOf(ctx), a),
    ),
  },
};
