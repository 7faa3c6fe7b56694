// Who am I, and the tokens (ADMIN).
import { createToken, type CreateTokenInput, revokeToken, listTokens } from "../../store/index.js";
import { adminOnly, anyRole, guarded, principalOf } from "../auth.js";
import type { ApiContext } from "../context.js";
import { asArgs, inInput } from "../errors.js";
import { iso } from "../views.js";

export const tokenResolvers = {
  Query: {
    me: guarded(anyRole, asArgs, (_a, ctx: ApiContext) => {
      const p = principalOf(ctx);
      return { name: p.name, role: p.role, queues: p.queues, cluster: p.cluster };
    }),
    tokens: guarded(adminOnly, asArgs, async (_a, ctx: ApiContext) =>
      (await listTokens(ctx.store)).map((t) => ({
        id: t.id,
        name: t.name,
        role: t.role,
        queues: t.queues,
        cluster: t.clusterName,
        createdBy: t.createdBy,
        createdAt: iso(t.createdAt),
        revokedAt: iso(t.revokedAt),
      })),
    ),
  },
  Mutation: {
    createToken: guarded(adminOnly, inInput, (a: { input: CreateTokenInput }, ctx) =>
      createToken(ctx.store, { name: principalOf(ctx).name }, a.input),
    ),
    revokeToken: guarded(adminOnly, asArgs, (a: { id: string }, ctx) =>
      revokeToken(ctx.store, { name: principalOf(ctx).name }, a),
    ),
  },
};
