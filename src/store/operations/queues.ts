// Queue tree and quota operations (admin). One transaction each; refused changes change nothing.
import { z } from "zod";
import type { Tx } from "../db.js";
import { DEFAULT_QUOTA_SCOPE } from "../domain/quotas.js";
import { UNFINISHED_JOB_STATES } from "../domain/job-state.js";
import { QueueTree } from "../domain/queue-tree.js";
import { ConflictError, NotFoundError } from "../errors.js";
import { Prisma } from "../generated/prisma/client.js";
import type { Queue, QuotaResource } from "../types.js";
import { type Actor, type Store, transact } from "../store.js";
import { queueName, clusterName, dnsLabel } from "../validation/names.js";
import { POD_SECURITY_LEVELS } from "../validation/pod-security/index.js";
import { queuePodPolicyInput, storedQueuePodPolicy } from "../validation/pod-policy.js";
import { invalidAt, parseInput } from "../validation/parse.js";
import { bytes, cpuMillis } from "../validation/quantities.js";
import { lockQueueTree } from "./queue-tree-lock.js";

const priority = z
  .int("priority must be a whole number")
  .min(0, "priority must not be negative")
  .max(1_000_000, "priority must be at most 1000000");

/** Namespaces a queue's jobs may use; null (or absent at creation) = the parent's. */
const namespaces = z
  .array(dnsLabel("namespace"), "namespaces must be a list of namespace names")
  .min(1, "namespaces must name at least one namespace (null inherits the parent's)")
  .max(100, "namespaces may name at most 100 namespaces")
  .refine((l) => new Set(l).size === l.length, "namespaces must not repeat a namespace");

const podSecurity = z.enum(POD_SECURITY_LEVELS, "podSecurity must be PRIVILEGED, BASELINE or RESTRICTED");

/** What a workload's container that asks for none gets (cpu and memory; per container). */
const defaultRequest = z
  .object({ cpu: cpuMillis.nullish(), memory: bytes.nullish() })
  .strict()
  .refine(
    (r) => (r.cpu ?? 0) > 0 && (r.memory ?? 0n) > 0n,
    "defaultRequest needs both cpu and memory above 0",
  );

const createQueueInput = z
  .object({
    name: queueName,
    parent: queueName.nullish(),
    priority: priority.nullish(),
    namespaces: namespaces.nullish(),
    podSecurity: podSecurity.nullish(),
    defaultRequest: defaultRequest.nullish(),
    podPolicy: queuePodPolicyInput.nullish(),
  })
  .strict();

/** The stored form of a default request. */
const storedRequest = (r: z.output<typeof defaultRequest>) => ({
  cpuMillis: r.cpu!,
  memory: Number(r.memory!),
});
export type CreateQueueInput = z.input<typeof createQueueInput>;

async function loadTree(tx: Tx): Promise<QueueTree> {
  return new QueueTree(await tx.queue.findMany({ select: { name: true, parentName: true } }));
}

/** A queue that holds unfinished jobs must stay a leaf: jobs are only ever in leaf queues. */
async function refuseIfHoldsJobs(tx: Tx, queue: string, field: string): Promise<void> {
  // FOR UPDATE on the queue row waits for submits in flight (they hold FOR KEY SHARE on it).
  await tx.$queryRaw`SELECT name FROM queue WHERE name = ${queue} FOR UPDATE`;
  const active = await tx.job.count({ where: { queueName: queue, state: { in: UNFINISHED_JOB_STATES } } });
  if (active) {
    throw new ConflictError(
      `queue "${queue}" has ${active} unfinished job(s); only a queue without jobs can have children`,
      field,
    );
  }
}

export async function createQueue(store: Store, actor: Actor, input: CreateQueueInput): Promise<Queue> {
  const q = parseInput(createQueueInput, input);
  return transact(store, actor, async (tx, record) => {
    await lockQueueTree(tx);
    const tree = await loadTree(tx);
    if (tree.has(q.name)) throw new ConflictError(`queue "${q.name}" already exists`, "name");
    if (q.parent) {
      if (!tree.has(q.parent)) throw invalidAt(["parent"], `queue "${q.parent}" does not exist`);
      await refuseIfHoldsJobs(tx, q.parent, "parent");
    }
    const row = await tx.queue.create({
      data: {
        name: q.name,
        parentName: q.parent ?? null,
        priority: q.priority ?? undefined,
        namespaces: q.namespaces ?? [],
        podSecurity: q.podSecurity ?? null,
        defaultRequest: q.defaultRequest ? storedRequest(q.defaultRequest) : Prisma.DbNull,
        podPolicy: q.podPolicy ? storedQueuePodPolicy(q.podPolicy) : Prisma.DbNull,
      },
    });
    record({
      kind: "queue.created",
      queue: q.name,
      message: `queue ${q.name} created${q.parent ? ` under ${q.parent}` : ""}`,
    });
    return row;
  });
}

/** The same fields as at creation. */
const updateQueueInput = createQueueInput;
/** `parent: null` moves the queue to the top; an absent `parent` leaves it where it is.
 * `namespaces` / `podSecurity` / `podPolicy` null: inherit the parent's again; absent: unchanged. */
export type UpdateQueueInput = z.input<typeof updateQueueInput>;

export async function updateQueue(store: Store, actor: Actor, input: UpdateQueueInput): Promise<Queue> {
  const q = parseInput(updateQueueInput, input);
  return transact(store, actor, async (tx, record) => {
    await lockQueueTree(tx);
    const tree = await loadTree(tx);
    if (!tree.has(q.name)) throw new NotFoundError("queue", q.name, "name");
    const changes: string[] = [];
    const data: Prisma.QueueUncheckedUpdateInput = {};
    if (q.parent !== undefined) {
      if (q.parent !== null) {
        if (!tree.has(q.parent)) throw invalidAt(["parent"], `queue "${q.parent}" does not exist`);
        if (tree.wouldCycle(q.name, q.parent)) {
          throw invalidAt(
            ["parent"],
            q.parent === q.name
              ? `queue "${q.name}" cannot be its own parent`
              : `moving "${q.name}" under "${q.parent}" would make a cycle: "${q.parent}" is inside "${q.name}"`,
          );
        }
        await refuseIfHoldsJobs(tx, q.parent, "parent");
      }
      data.parentName = q.parent;
      changes.push(`parent → ${q.parent ?? "(top)"}`);
    }
    if (q.priority != null) {
      data.priority = q.priority;
      changes.push(`priority → ${q.priority}`);
    }
    if (q.namespaces !== undefined) {
      data.namespaces = q.namespaces ?? [];
      changes.push(`namespaces → ${q.namespaces?.join(", ") ?? "(inherited)"}`);
    }
    if (q.podSecurity !== undefined) {
      data.podSecurity = q.podSecurity;
      changes.push(`podSecurity → ${q.podSecurity ?? "(inherited)"}`);
    }
    if (q.defaultRequest !== undefined) {
      data.defaultRequest = q.defaultRequest ? storedRequest(q.defaultRequest) : Prisma.DbNull;
      changes.push(
        `defaultRequest → ${q.defaultRequest ? `cpu ${q.defaultRequest.cpu}m, memory ${q.defaultRequest.memory}` : "(inherited)"}`,
      );
    }
    if (q.podPolicy !== undefined) {
      // The queue's own allow-lists, replaced whole (a list left out inherits the parent's).
      data.podPolicy = q.podPolicy ? storedQueuePodPolicy(q.podPolicy) : Prisma.DbNull;
      changes.push(
        `podPolicy → ${q.podPolicy ? JSON.stringify(storedQueuePodPolicy(q.podPolicy)) : "(inherited)"}`,
      );
    }
    const row = await tx.queue.update({ where: { name: q.name }, data });
    if (changes.length)
      record({ kind: "queue.updated", queue: q.name, message: `queue ${q.name}: ${changes.join(", ")}` });
    return row;
  });
}

export async function deleteQueue(store: Store, actor: Actor, input: { name: string }): Promise<true> {
  const { name } = parseInput(z.object({ name: queueName }).strict(), input);
  return transact(store, actor, async (tx, record) => {
    await lockQueueTree(tx);
    const tree = await loadTree(tx);
    if (!tree.has(name)) throw new NotFoundError("queue", name, "name");
    const children = tree.childrenOf(name);
    if (children.length)
      throw new ConflictError(
        `queue "${name}" has child queues (${children.join(", ")}); delete or move them first`,
        "name",
      );
    await refuseIfHoldsJobs(tx, name, "name");
    // Finished jobs go with the queue (cascade); the event log keeps their history.
    await tx.queue.delete({ where: { name } });
    record({ kind: "queue.deleted", queue: name, message: `queue ${name} deleted` });
    return true as const;
  });
}

/** -1 (unlimited / "whatever it asks for") or a non-negative amount. */
const quotaAmount = (what: string) =>
  z
    .number(`${what} must be a number`)
    .refine((v) => v === -1 || v >= 0, `${what} must be -1 (unlimited) or a non-negative amount`);

const setQuotaInput = z
  .object({
    queue: queueName,
    cluster: clusterName.nullish(),
    resource: z.enum(["GPU", "CPU", "MEMORY"], "resource must be GPU, CPU or MEMORY"),
    deserved: quotaAmount("deserved").nullish(),
    limit: quotaAmount("limit").nullish(),
    overQuotaWeight: z
      .number("overQuotaWeight must be a number")
      .min(0, "overQuotaWeight must not be negative")
      .nullish(),
  })
  .strict()
  .superRefine((q, ctx) => {
    // CPU is counted in millicores and memory in bytes: whole numbers only.
    if (q.resource === "GPU") return;
    for (const f of ["deserved", "limit"] as const) {
      const v = q[f];
      if (v != null && !Number.isInteger(v)) {
        ctx.addIssue({
          code: "custom",
          path: [f],
          message: `${f} of ${q.resource} must be a whole number (${q.resource === "CPU" ? "millicores" : "bytes"})`,
        });
      }
    }
  });

/** Fields left out keep their value; fields given as null are cleared (inherit the default row). */
export type SetQueueQuotaInput = z.input<typeof setQuotaInput>;

export async function setQueueQuota(store: Store, actor: Actor, input: SetQueueQuotaInput): Promise<Queue> {
  const q = parseInput(setQuotaInput, input);
  const scope = q.cluster ?? DEFAULT_QUOTA_SCOPE;
  return transact(store, actor, async (tx, record) => {
    const queue = await tx.queue.findUnique({ where: { name: q.queue } });
    if (!queue) throw invalidAt(["queue"], `queue "${q.queue}" does not exist`);
    if (q.cluster && !(await tx.cluster.findUnique({ where: { name: q.cluster }, select: { name: true } }))) {
      throw invalidAt(["cluster"], `cluster "${q.cluster}" does not exist`);
    }
    const key = { queueName: q.queue, scope, resource: q.resource as QuotaResource };
    // Row lock so that concurrent partial updates of one row merge instead of overwriting.
    await tx.$queryRaw`SELECT 1 FROM queue_quota WHERE queue_name = ${q.queue} AND scope = ${scope}
      AND resource = ${q.resource}::"QuotaResource" FOR UPDATE`;
    const current = await tx.queueQuota.findUnique({ where: { queueName_scope_resource: key } });
    const merged = {
      deserved: q.deserved === undefined ? (current?.deserved ?? null) : q.deserved,
      limit: q.limit === undefined ? (current?.limit ?? null) : q.limit,
      overQuotaWeight:
        q.overQuotaWeight === undefined ? (current?.overQuotaWeight ?? null) : q.overQuotaWeight,
    };
    if (
      merged.deserved != null &&
      merged.limit != null &&
      merged.deserved !== -1 &&
      merged.limit !== -1 &&
      merged.deserved > merged.limit
    ) {
      throw invalidAt(
        [q.deserved !== undefined ? "deserved" : "limit"],
        `deserved (${merged.deserved}) exceeds limit (${merged.limit})`,
      );
    }
    if (merged.deserved === null && merged.limit === null && merged.overQuotaWeight === null) {
      await tx.queueQuota.deleteMany({ where: key });
    } else {
      await tx.queueQuota.upsert({
        where: { queueName_scope_resource: key },
        create: { ...key, ...merged },
        update: merged,
      });
    }
    const where = q.cluster ? `on ${q.cluster}` : "by default";
    record({
      kind: "quota.set",
      queue: q.queue,
      cluster: q.cluster ?? null,
      message: `quota of ${q.queue} ${where}, ${q.resource}: deserved ${merged.deserved ?? "-"}, limit ${merged.limit ?? "-"}, over-quota weight ${merged.overQuotaWeight ?? "-"}`,
    });
    return queue;
  });
}
