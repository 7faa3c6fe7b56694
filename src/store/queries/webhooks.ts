// Reads of webhooks and their delivery logs (the API's webhooks and webhookDeliveries).
import { prismaOf } from "../client.js";
import { z } from "zod";
import type { Store } from "../store.js";
import type { Webhook, WebhookDelivery, WebhookDeliveryState } from "../types.js";

/** Every webhook, oldest first. */
export async function listWebhooks(store: Store): Promise<Webhook[]> {
  return prismaOf(store).webhook.findMany({ orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
}

/** null for an unknown id, or one that is no webhook id at all. */
export async function webhookById(store: Store, id: string): Promise<Webhook | null> {
  if (!z.uuid().safeParse(id).success) return null;
  return prismaOf(store).webhook.findUnique({ where: { id } });
}

/** At most this many deliveries per page. */
export const MAX_WEBHOOK_DELIVERIES_PAGE = 200;

/** A webhook's deliveries, newest first. */
export async function webhookDeliveries(
  store: Store,
  webhook: string,
  o: { first: number; state?: WebhookDeliveryState | null },
): Promise<WebhookDelivery[]> {
  return prismaOf(store).webhookDelivery.findMany({
    where: { webhookId: webhook, ...(o.state ? { state: o.state } : {}) },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: Math.min(o.first, MAX_WEBHOOK_DELIVERIES_PAGE),
  });
}
