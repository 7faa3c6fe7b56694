// API tokens: a random secret shown once; the database keeps only its sha256.
import { prismaOf } from "../client.js";
import { createHash, randomBytes } from "node:crypto";
import { z } from "zod";
import { NotFoundError } from "../errors.js";
import type { Role } from "../types.js";
import { type Actor, type Store, transact } from "../store.js";
import { clusterName, queueName } from "../validation/names.js";
import { invalidAt, parseInput } from "../validation/parse.js";

export const hashSecret = (secret: string): string => createHash("sha256").update(secret).digest("hex");

const newSecret = (): string => `fq_${randomBytes(32).toString("base64url")}`;

/** Who a token is. */
export interface Principal {
  tokenId: string;
  name: string;
  role: Role;
  /** MEMBER: roots of the queue subtrees it may submit to and cancel in. */
  queues: string[];
  /** AGENT: the cluster it speaks for. */
  cluster: string | null;
  /** The person: a signed-in person's subject, or the subject a static token is bound to. */
  subject?: string | null;
  /** A signed-in person's e-mail, when their token carries one. */
  email?: string | null;
}

/** Who is recorded as doing what a principal does: the person (e-mail, else subject), else the
 * token's name. */
export const personOf = (p: Principal): string => p.email ?? p.subject ?? p.name;

export interface CreatedToken {
  id: string;
  /** Shown once; only its hash is stored. */
  secret: string;
}

const createTokenInput = z
  .object({
    name: z.string().min(1, "name must not be empty").max(100, "name must be at most 100 characters"),
    role: z.enum(["ADMIN", "MEMBER", "VIEWER", "AGENT"], "role must be ADMIN, MEMBER, VIEWER or AGENT"),
    queues: z.array(queueName).nullish(),
    cluster: clusterName.nullish(),
    subject: z
      .string()
      .trim()
      .min(1, "subject must not be empty")
      .max(256, "subject must be at most 256 characters")
      .nullish(),
  })
  .strict()
  .superRefine((t, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: "custom", path: [path], message });
    if (t.role === "MEMBER" && !t.queues?.length)
      issue("queues", "a MEMBER token needs the queues it may use");
    if (t.role !== "MEMBER" && t.queues?.length)
      issue("queues", `queues only apply to MEMBER tokens, not ${t.role}`);
    if (t.role === "AGENT" && !t.cluster) issue("cluster", "an AGENT token needs its cluster");
    if (t.role !== "AGENT" && t.cluster)
      issue("cluster", `cluster only applies to AGENT tokens, not ${t.role}`);
    // An agent is a cluster, not a person.
    if (t.role === "AGENT" && t.subject)
      issue("subject", "an AGENT token acts for its cluster, not a person");
  });
export type CreateTokenInput = z.input<typeof createTokenInput>;

export async function createToken(
  store: Store,
  actor: Actor,
  input: CreateTokenInput,
): Promise<CreatedToken> {
  const t = parseInput(createTokenInput, input);
  const secret = newSecret();
  return transact(store, actor, async (tx, record) => {
    const queues = [...new Set(t.queues ?? [])];
    if (queues.length) {
      const found = new Set(
        (await tx.queue.findMany({ where: { name: { in: queues } }, select: { name: true } })).map(
          (q) => q.name,
        ),
      );
      const i = (t.queues ?? []).findIndex((q) => !found.has(q));
      if (i >= 0) throw invalidAt(["queues", i], `queue "${t.queues![i]}" does not exist`);
    }
    if (t.cluster && !(await tx.cluster.findUnique({ where: { name: t.cluster }, select: { name: true } }))) {
      throw invalidAt(["cluster"], `cluster "${t.cluster}" does not exist`);
    }
    const row = await tx.apiToken.create({
      data: {
        name: t.name,
        role: t.role,
        secretHash: hashSecret(secret),
        queues,
        clusterName: t.cluster ?? null,
        subject: t.subject ?? null,
        createdBy: actor.name,
      },
    });
    record({
      kind: "token.created",
      cluster: t.cluster ?? null,
      message: `token ${t.name} (${t.role}${t.subject ? ` for ${t.subject}` : ""}) created`,
    });
    return { id: row.id, secret };
  });
}

const uuid = z.uuid("not a token id");

/** Idempotent: revoking a revoked token is fine. */
export async function revokeToken(store: Store, actor: Actor, input: { id: string }): Promise<true> {
  const { id } = parseInput(z.object({ id: uuid }).strict(), input);
  return transact(store, actor, async (tx, record) => {
    const row = await tx.apiToken.findUnique({ where: { id } });
    if (!row) throw new NotFoundError("token", id, "id");
    if (!row.revokedAt) {
      await tx.apiToken.update({ where: { id }, data: { revokedAt: new Date() } });
      record({ kind: "token.revoked", message: `token ${row.name} (${row.role}) revoked` });
    }
    return true as const;
  });
}

/** The principal of a bearer secret; null for unknown or revoked secrets. */
export async function authenticate(store: Store, secret: string): Promise<Principal | null> {
  const row = await prismaOf(store).apiToken.findUnique({ where: { secretHash: hashSecret(secret) } });
  if (!row || row.revokedAt) return null;
  return {
    tokenId: row.id,
    name: row.name,
    role: row.role,
    queues: row.queues,
    cluster: row.clusterName,
    subject: row.subject,
  };
}

/** `fleetq token create --admin`: a new ADMIN token; the secret is returned once. */
export async function createAdminToken(store: Store, name = "admin"): Promise<CreatedToken> {
  return createToken(store, { name: "cli" }, { name, role: "ADMIN" });
}

/**
 * FLEETQ_ADMIN_TOKEN at start: makes `secret` an ADMIN token unless a token with that secret
 * already exists. A revoked one stays revoked: restarting with the same variable never revives it.
 */
export async function ensureAdminToken(
  store: Store,
  secret: string,
  name = "bootstrap-admin",
): Promise<boolean> {
  if (secret.length < 16) throw new Error("FLEETQ_ADMIN_TOKEN must be at least 16 characters");
  const secretHash = hashSecret(secret);
  return transact(store, { name: "startup" }, async (tx, record) => {
    const inserted = await tx.apiToken.createMany({
      data: [{ name, role: "ADMIN", secretHash }],
      skipDuplicates: true,
    });
    if (inserted.count)
      record({ kind: "token.created", message: `token ${name} (ADMIN) created from FLEETQ_ADMIN_TOKEN` });
    return inserted.count > 0;
  });
}
