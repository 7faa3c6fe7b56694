// Role bindings: who a person signed in at the identity provider is in fleetq. A binding names a
// subject (matched against the token's subject and its e-mail) or a group, and grants ADMIN,
// VIEWER, or MEMBER of queue subtrees. A person's role is the union of the live bindings naming
// them or any of their groups.
import { prismaOf } from "../client.js";
import { z } from "zod";
import type { Tx } from "../db.js";
import { NotFoundError } from "../errors.js";
import { type Actor, type Store, transact } from "../store.js";
import type { RoleBinding } from "../types.js";
import { queueName } from "../validation/names.js";
import { invalidAt, parseInput } from "../validation/parse.js";
import type { Principal } from "./tokens.js";

const name = (what: string) =>
  z
    .string({ error: `${what} must be a string` })
    .trim()
    .min(1, `${what} must not be empty`)
    .max(256, `${what} must be at most 256 characters`);

const createRoleBindingInput = z
  .object({
    subject: name("subject").nullish(),
    group: name("group").nullish(),
    role: z.enum(
      ["ADMIN", "MEMBER", "VIEWER"],
      "role must be ADMIN, MEMBER or VIEWER (AGENT is for tokens only)",
    ),
    queues: z.array(queueName).nullish(),
    cluster: z.string().nullish(),
  })
  .strict()
  .superRefine((b, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: "custom", path: [path], message });
    if (!b.subject === !b.group) issue("subject", "give exactly one of subject or group");
    if (b.role === "MEMBER" && !b.queues?.length)
      issue("queues", "a MEMBER binding needs the queues it grants");
    if (b.role !== "MEMBER" && b.queues?.length)
      issue("queues", `queues only apply to MEMBER bindings, not ${b.role}`);
    // A binding limited to one cluster is not enforced anywhere yet: refusing it beats granting
    // more than its author meant.
    if (b.cluster != null)
      issue("cluster", "bindings limited to a cluster are not supported: leave cluster out");
  });
export type CreateRoleBindingInput = z.input<typeof createRoleBindingInput>;

export async function checkQueuesExist(tx: Tx, queues: readonly string[]): Promise<void> {
  const found = new Set(
    (await tx.queue.findMany({ where: { name: { in: [...queues] } }, select: { name: true } })).map(
      (q) => q.name,
    ),
  );
  const i = queues.findIndex((q) => !found.has(q));
  if (i >= 0) throw invalidAt(["queues", i], `queue "${queues[i]}" does not exist`);
}

const describe = (b: { subject?: string | null; group?: string | null; role: string; queues?: string[] }) =>
  `${b.subject ? `subject ${b.subject}` : `group ${b.group}`} → ${b.role}${b.queues?.length ? ` of ${b.queues.join(", ")}` : ""}`;

export async function createRoleBinding(
  store: Store,
  actor: Actor,
  input: CreateRoleBindingInput,
): Promise<RoleBinding> {
  const b = parseInput(createRoleBindingInput, input);
  const queues = [...new Set(b.queues ?? [])];
  return transact(store, actor, async (tx, record) => {
    await checkQueuesExist(tx, b.queues ?? []);
    const row = await tx.roleBinding.create({
      data: {
        subject: b.subject ?? null,
        group: b.group ?? null,
        role: b.role,
        queues,
        createdBy: actor.name,
      },
    });
    record({ kind: "rolebinding.created", message: `role binding ${describe(row)} created` });
    return row;
  });
}

/** Sets revokedAt; an unknown or already deleted binding is NOT_FOUND. */
export async function deleteRoleBinding(store: Store, actor: Actor, input: { id: string }): Promise<true> {
  const { id } = parseInput(z.object({ id: z.uuid("not a role binding id") }).strict(), input);
  return transact(store, actor, async (tx, record) => {
    const row = await tx.roleBinding.findUnique({ where: { id } });
    if (!row || row.revokedAt) throw new NotFoundError("role binding", id, "id");
    await tx.roleBinding.update({ where: { id }, data: { revokedAt: new Date() } });
    record({ kind: "rolebinding.deleted", message: `role binding ${describe(row)} deleted` });
    return true as const;
  });
}

/** The live bindings, oldest first. */
export function listRoleBindings(store: Store): Promise<RoleBinding[]> {
  return prismaOf(store).roleBinding.findMany({ where: { revokedAt: null }, orderBy: { createdAt: "asc" } });
}

/** A person as their identity provider's token says. */
export interface Identity {
  subject: string;
  email: string | null;
  groups: readonly string[];
}

/** The principal of a signed-in person: ADMIN if any binding is; else MEMBER of every MEMBER
 * binding's queues; else VIEWER; null when no live binding names them or their groups. */
export async function principalOfIdentity(store: Store, who: Identity): Promise<Principal | null> {
  const names = who.email ? [who.subject, who.email] : [who.subject];
  const bindings = await prismaOf(store).roleBinding.findMany({
    where: {
      revokedAt: null,
      OR: [{ subject: { in: names } }, ...(who.groups.length ? [{ group: { in: [...who.groups] } }] : [])],
    },
    select: { role: true, queues: true },
  });
  if (!bindings.length) return null;
  const role = bindings.some((b) => b.role === "ADMIN")
    ? "ADMIN"
    : bindings.some((b) => b.role === "MEMBER")
      ? "MEMBER"
      : "VIEWER";
  const queues = role === "MEMBER" ? [...new Set(bindings.flatMap((b) => b.queues))].sort() : [];
  return {
    // Per person, not per token: a person's rate-limit bucket survives signing in again.
    tokenId: `person:${who.subject}`,
    name: who.email ?? who.subject,
    role,
    queues,
    cluster: null,
    subject: who.subject,
    email: who.email,
  };
}
