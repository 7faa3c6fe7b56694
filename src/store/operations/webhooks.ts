// Webhooks: registering them, fanning recorded events out to deliveries (once each: the outbox
// rows are claimed and deleted in the transaction that writes the deliveries), and recording how
// each delivery attempt went — which may disable the webhook. docs/webhooks.md.
import { prismaOf } from "../client.js";
import { randomBytes } from "node:crypto";
import { z } from "zod";
import type { Tx } from "../db.js";
import { QueueTree } from "../domain/queue-tree.js";
import {
  type AttemptOutcome,
  planAttempt,
  planDeliveries,
  WEBHOOK_DELIVERY_LOG,
  type WebhookFilter,
  type WebhookSourceEvent,
} from "../domain/webhooks.js";
import { NotFoundError } from "../errors.js";
import { type Actor, type Store, transact } from "../store.js";
import type { Webhook } from "../types.js";
import { parseInput } from "../validation/parse.js";
import { parseWebhookInput, type WebhookInput } from "../validation/webhook.js";
import { checkQueuesExist } from "./role-bindings.js";

/** Where a webhook sends, as events name it: the origin only, since chat tools put their
 * credentials in the path (every token may read the event log). */
export const originOf = (url: string): string => new URL(url).origin;

const newSecret = (): string => `whsec_${randomBytes(32).toString("base64url")}`;

/** Registers a webhook; its secret is in the answer (and kept: signing needs it). Who may ask for
 * which queues and for private targets is the caller's to check. */
export async function createWebhook(store: Store, actor: Actor, input: WebhookInput): Promise<Webhook> {
  const w = parseWebhookInput(input);
  const queues = [...new Set(w.queues ?? [])];
  return transact(store, actor, async (tx, record) => {
    await checkQueuesExist(tx, queues);
    const row = await tx.webhook.create({
      data: {
        url: w.url,
        events: [...new Set(w.events)],
        queues,
        labels: w.labels ?? [],
        secret: newSecret(),
        allowPrivateTargets: w.allowPrivateTargets ?? false,
        createdBy: actor.name,
      },
    });
    record({ kind: "webhook.created", message: `webhook ${row.id} to ${originOf(row.url)} created` });
    return row;
  });
}

async function lockWebhook(tx: Tx, id: string): Promise<Webhook> {
  parseInput(z.uuid("not a webhook id"), id, ["id"]);
  const rows = await tx.$queryRaw<
    { id: string }[]
  >`SELECT id::text FROM webhook WHERE id = ${id}::uuid FOR UPDATE`;
  if (!rows.length) throw new NotFoundError("webhook", id);
  return tx.webhook.findUniqueOrThrow({ where: { id } });
}

/** Deletes the webhook and its delivery log. */
export async function deleteWebhook(store: Store, actor: Actor, id: string): Promise<boolean> {
  return transact(store, actor, async (tx, record) => {
    const row = await lockWebhook(tx, id);
    await tx.webhook.delete({ where: { id } });
    record({ kind: "webhook.deleted", message: `webhook ${id} to ${originOf(row.url)} deleted` });
    return true;
  });
}

/** Enables the webhook again with a clean run of failures. */
export async function enableWebhook(store: Store, actor: Actor, id: string): Promise<Webhook> {
  return transact(store, actor, async (tx, record) => {
    const row = await lockWebhook(tx, id);
    if (row.enabled) return row;
    record({ kind: "webhook.enabled", message: `webhook ${id} to ${originOf(row.url)} enabled again` });
    return tx.webhook.update({
      where: { id },
      data: { enabled: true, disabledReason: null, disabledAt: null, consecutiveFailures: 0 },
    });
  });
}

interface SourceRow {
  id: bigint;
  at: Date;
  kind: string;
  message: string;
  queue: string | null;
  cluster: string | null;
  jobId: string | null;
  jobName: string | null;
  jobQueue: string | null;
  jobCluster: string | null;
  state: string | null;
  labels: Record<string, string> | null;
  createdAt: Date | null;
  startedAt: Date | null;
  finishedAt: Date | null;
  restarts: number | null;
  estimatedStart: Date | null;
}

const sourceEvent = (r: SourceRow): WebhookSourceEvent => ({
  id: r.id.toString(),
  at: r.at,
  kind: r.kind,
  message: r.message,
  queue: r.queue,
  cluster: r.cluster,
  job:
    r.jobId && r.jobName !== null
      ? {
          id: r.jobId,
          name: r.jobName,
          queue: r.jobQueue!,
          cluster: r.jobCluster,
          state: r.state!,
          labels: r.labels ?? {},
          createdAt: r.createdAt!,
          startedAt: r.startedAt,
          finishedAt: r.finishedAt,
          restarts: r.restarts ?? 0,
          estimatedStart: r.estimatedStart,
        }
      : null,
});

/** Claims up to `limit` outbox rows (rows another transaction holds are skipped) and deletes them. */
async function claimOutbox(tx: Tx, limit: number): Promise<WebhookSourceEvent[]> {
  const rows = await tx.$queryRaw<SourceRow[]>`
    WITH claimed AS (
      DELETE FROM webhook_outbox WHERE event_id IN (
        SELECT event_id FROM webhook_outbox ORDER BY event_id LIMIT ${limit} FOR UPDATE SKIP LOCKED)
      RETURNING event_id)
    SELECT e.id, e.at, e.kind, e.message, e.queue_name AS queue, e.cluster_name AS cluster,
      e.job_id::text AS "jobId", j.name AS "jobName", j.queue_name AS "jobQueue",
      j.cluster_name AS "jobCluster", j.state::text AS state, j.labels, j.created_at AS "createdAt",
      j.started_at AS "startedAt", j.finished_at AS "finishedAt", j.restarts,
      p.first_estimated_start AS "estimatedStart"
    FROM claimed c JOIN event e ON e.id = c.event_id
    LEFT JOIN job j ON j.id = e.job_id
    LEFT JOIN job_estimate p ON p.job_id = e.job_id
    ORDER BY e.id`;
  return rows.map(sourceEvent);
}

/** The enabled webhooks, held (FOR SHARE) until the deliveries are written: a webhook being
 * disabled meanwhile either waits for them (and gives them up) or is not fanned out to. */
async function enabledWebhookFilters(tx: Tx): Promise<WebhookFilter[]> {
  return tx.$queryRaw<WebhookFilter[]>`
    SELECT id::text, events, queues, labels FROM webhook WHERE enabled ORDER BY id FOR SHARE`;
}

/** Keeps each webhook's newest finished deliveries (WEBHOOK_DELIVERY_LOG); pending ones stay. */
async function pruneDeliveryLogs(tx: Tx, webhooks: readonly string[]): Promise<void> {
  if (!webhooks.length) return;
  await tx.$executeRaw`
    DELETE FROM webhook_delivery d USING (
      SELECT id FROM (
        SELECT id, row_number() OVER (PARTITION BY webhook_id ORDER BY created_at DESC, id DESC) AS n
        FROM webhook_delivery WHERE webhook_id = ANY(${webhooks}::uuid[]) AND state <> 'PENDING') r
      WHERE r.n > ${WEBHOOK_DELIVERY_LOG}) old
    WHERE d.id = old.id`;
}

export interface FanOutResult {
  /** Outbox rows claimed (when `limit`, more may be waiting). */
  claimed: number;
  /** The new deliveries' ids, to be sent. */
  deliveries: string[];
}

/**
 * Turns up to `limit` outbox events into deliveries to the enabled webhooks that take them, and
 * removes them from the outbox, in one transaction: an event is fanned out once, whichever
 * worker does it. `link`: the dashboard's address for payloads, if known.
 */
export async function fanOutWebhookEvents(
  store: Store,
  o: { limit: number; link: string | null },
): Promise<FanOutResult> {
  return prismaOf(store).$transaction(async (tx) => {
    const events = await claimOutbox(tx, o.limit);
    if (!events.length) return { claimed: 0, deliveries: [] };
    const [webhooks, queues] = await Promise.all([
      enabledWebhookFilters(tx),
      tx.queue.findMany({ select: { name: true, parentName: true } }),
    ]);
    const planned = planDeliveries(events, webhooks, new QueueTree(queues), o.link);
    const created = planned.length
      ? await tx.webhookDelivery.createManyAndReturn({
          data: planned.map((d) => ({
            webhookId: d.webhookId,
            eventId: BigInt(d.eventId),
            event: d.event,
            jobId: d.jobId,
            payload: d.payload as object,
          })),
          skipDuplicates: true,
          select: { id: true },
        })
      : [];
    await pruneDeliveryLogs(tx, [...new Set(planned.map((d) => d.webhookId))]);
    return { claimed: events.length, deliveries: created.map((d) => d.id) };
  });
}

/** A pending delivery with what sending it needs; null when it is no longer to be sent. */
export interface DeliveryToSend {
  id: string;
  attempts: number;
  payload: unknown;
  webhook: { id: string; url: string; secret: string; allowPrivateTargets: boolean };
}

export async function webhookDeliveryToSend(store: Store, id: string): Promise<DeliveryToSend | null> {
  const d = await prismaOf(store).webhookDelivery.findUnique({
    where: { id },
    select: {
      id: true,
      attempts: true,
      payload: true,
      state: true,
      webhook: { select: { id: true, url: true, secret: true, allowPrivateTargets: true, enabled: true } },
    },
  });
  if (!d || d.state !== "PENDING" || !d.webhook.enabled) return null;
  const { enabled: _, ...webhook } = d.webhook;
  return { id: d.id, attempts: d.attempts, payload: d.payload, webhook };
}

/** Pending deliveries created before `before`, oldest first: those whose queue job may be lost. */
export async function pendingWebhookDeliveries(store: Store, before: Date, limit: number): Promise<string[]> {
  const rows = await prismaOf(store).webhookDelivery.findMany({
    where: { state: "PENDING", createdAt: { lt: before }, webhook: { enabled: true } },
    orderBy: { createdAt: "asc" },
    take: limit,
    select: { id: true },
  });
  return rows.map((r) => r.id);
}

export interface AttemptResult {
  state: "PENDING" | "SUCCEEDED" | "FAILED";
  /** This attempt disabled the webhook. */
  disabled: boolean;
}

/** Records one attempt of a pending delivery; a delivery already finished is left as it is. A
 * webhook disabled here has its other pending deliveries given up, with the event
 * `webhook.disabled`. */
export async function recordWebhookAttempt(
  store: Store,
  actor: Actor,
  a: AttemptOutcome & { delivery: string; disableAfter: number; at?: Date },
): Promise<AttemptResult | null> {
  const at = a.at ?? new Date();
  return transact(store, actor, async (tx, record) => {
    const d = await tx.webhookDelivery.findUnique({ where: { id: a.delivery }, select: { webhookId: true } });
    if (!d) return null;
    const webhook = await lockWebhook(tx, d.webhookId);
    const delivery = await tx.webhookDelivery.findUniqueOrThrow({ where: { id: a.delivery } });
    if (delivery.state !== "PENDING") return null;
    const plan = planAttempt(a, webhook, a.disableAfter);
    const finished = plan.state !== "PENDING";
    await tx.webhookDelivery.update({
      where: { id: a.delivery },
      data: {
        state: plan.state,
        attempts: { increment: 1 },
        responseCode: a.responseCode,
        error: a.error,
        lastAttemptAt: at,
        finishedAt: finished ? at : null,
      },
    });
    if (finished)
      await tx.webhook.update({
        where: { id: webhook.id },
        data: {
          consecutiveFailures: plan.consecutiveFailures,
          ...(plan.disable ? { enabled: false, disabledReason: plan.disable, disabledAt: at } : {}),
        },
      });
    if (plan.disable) {
      await tx.webhookDelivery.updateMany({
        where: { webhookId: webhook.id, state: "PENDING" },
        data: { state: "FAILED", error: "webhook disabled", finishedAt: at },
      });
      record({
        kind: "webhook.disabled",
        message: `webhook ${webhook.id} to ${originOf(webhook.url)} ${plan.disable}`,
      });
    }
    return { state: plan.state, disabled: plan.disable !== null };
  });
}
