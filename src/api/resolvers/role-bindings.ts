// Role bindings of people signed in at the identity provider (ADMIN). A change clears this
// replica's remembered principals at once; the others hear of it on the event bus.
import {
  createRoleBinding,
  type CreateRoleBindingInput,
  deleteRoleBinding,
  listRoleBindings,
  type RoleBinding,
} from "../../store/index.js";
import { actorOf, adminOnly, guarded } from "../auth.js";
import type { ApiContext } from "../context.js";
import { asArgs, inInput } from "../errors.js";
import { iso } from "../views.js";

const view = (b: RoleBinding) => ({
  id: b.id,
  subject: b.subject,
  group: b.group,
  role: b.role,
  queues: b.queues,
  cluster: b.clusterName,
  createdBy: b.createdBy,
  createdAt: iso(b.createdAt),
});

export const roleBindingResolvers = {
  Query: {
    roleBindings: guarded(adminOnly, asArgs, async (_a, ctx: ApiContext) =>
      (await listRoleBindings(ctx.store)).map(view),
    ),
  },
  Mutation: {
    createRoleBinding: guarded(adminOnly, inInput, async (a: { input: CreateRoleBindingInput }, ctx) => {
      const binding = await createRoleBinding(ctx.store, actorOf(ctx), a.input);
      ctx.principals.clear();
      return view(binding);
    }),
    deleteRoleBinding: guarded(adminOnly, asArgs, async (a: { id: string }, ctx) => {
      const deleted = await deleteRoleBinding(ctx.store, actorOf(ctx), a);
      ctx.principals.clear();
      return deleted;
    }),
  },
};
