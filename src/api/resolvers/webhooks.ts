// Webhooks: an ADMIN registers them for any queues, a MEMBER for queues within its subtrees. A
// MEMBER sees (and deletes, enables, reads the deliveries of) only webhooks whose queues all lie
// within its subtrees; to it, any other is not found.
import {
  createWebhook,
  deleteWebhook,
  enableWebhook,
  type Principal,
  parseWebhookInput,
  type QueueTree,
  type Webhook,
  type WebhookDelivery,
  type WebhookDeliveryState,
  type WebhookEventName,
  type WebhookInput,
  webhookById,
  webhookDeliveries,
  listWebhooks,
} from "../../store/index.js";
import { resolveTarget } from "../../webhooks/target.js";
import { actorOf, guarded, type Policy, principalOf } from "../auth.js";
import type { ApiContext } from "../context.js";
import { asArgs, badInput, forbidden, inInput, notFound } from "../errors.js";
import { iso } from "../views.js";

/** JOB_WAITING_PAST_ESTIMATE ↔ job.waiting_past_estimate */
const toEnum = (name: string) => name.toUpperCase().replace(".", "_");
const fromEnum = (value: string) => value.toLowerCase().replace("_", ".") as WebhookEventName;

const view = (w: Webhook, secret: string | null = null) => ({
  id: w.id,
  url: w.url,
  events: w.events.map(toEnum),
  queues: w.queues,
  labels: w.labels,
  allowPrivateTargets: w.allowPrivateTargets,
  enabled: w.enabled,
  disabledReason: w.disabledReason,
  disabledAt: w.disabledAt && iso(w.disabledAt),
  consecutiveFailures: w.consecutiveFailures,
  secret,
  createdBy: w.createdBy,
  createdAt: iso(w.createdAt),
});

const deliveryView = (d: WebhookDelivery) => ({
  id: d.id,
  event: toEnum(d.event),
  eventId: d.eventId.toString(),
  job: d.jobId,
  state: d.state,
  attempts: d.attempts,
  responseCode: d.responseCode,
  error: d.error,
  createdAt: iso(d.createdAt),
  lastAttemptAt: d.lastAttemptAt && iso(d.lastAttemptAt),
  finishedAt: d.finishedAt && iso(d.finishedAt),
  payload: d.payload,
});

const adminOrMember: Policy<unknown> = (ctx) => {
  const p = principalOf(ctx);
  if (p.role !== "ADMIN" && p.role !== "MEMBER")
    throw forbidden(`${p.role} token "${p.name}" may not manage webhooks: ADMIN or MEMBER only`);
};

const within = (p: Principal, tree: QueueTree, queue: string) =>
  p.queues.some((root) => tree.isWithin(queue, root));

const mayManage = (p: Principal, tree: QueueTree, w: Webhook) =>
  p.role === "ADMIN" || (w.queues.length > 0 && w.queues.every((q) => within(p, tree, q)));

/** The webhook, if the caller may manage it; NOT_FOUND otherwise. */
async function managedWebhook(ctx: ApiContext, id: string): Promise<Webhook> {
  const w = await webhookById(ctx.store, id);
  if (!w || !mayManage(principalOf(ctx), await ctx.loaders.queueTree(), w))
    throw notFound(`webhook "${id}" not found`, "id");
  return w;
}

/** A MEMBER's webhook watches queues within its subtrees and only public targets. */
async function checkMemberInput(ctx: ApiContext, input: WebhookInput): Promise<void> {
  const p = principalOf(ctx);
  if (p.role === "ADMIN") return;
  if (input.allowPrivateTargets)
    throw forbidden(`MEMBER token "${p.name}" may not allow private targets: ADMIN only`);
  if (!input.queues?.length)
    throw badInput("input.queues", "input.queues: a MEMBER's webhook names the queues it watches");
  const tree = await ctx.loaders.queueTree();
  input.queues.forEach((q, i) => {
    if (tree.has(q) && !within(p, tree, q))
      throw forbidden(
        `input.queues[${i}]: MEMBER token "${p.name}" may use queues ${p.queues.join(", ")} and below, not ${q}`,
      );
  });
}

async function checkTarget(url: string, allowPrivate: boolean): Promise<void> {
  try {
    await resolveTarget(url, allowPrivate);
  } catch (err) {
    throw badInput("input.url", `input.url: ${(err as Error).message}`);
  }
}

export const webhookResolvers = {
  Query: {
    webhooks: guarded(adminOrMember, asArgs, async (_a, ctx: ApiContext) => {
      const p = principalOf(ctx);
      const tree = await ctx.loaders.queueTree();
      return (await listWebhooks(ctx.store)).filter((w) => mayManage(p, tree, w)).map((w) => view(w));
    }),
    webhookDeliveries: guarded(
      adminOrMember,
      asArgs,
      async (a: { webhook: string; state?: WebhookDeliveryState | null; first: number }, ctx) => {
        if (a.first < 1) throw badInput("first", "first must be at least 1");
        await managedWebhook(ctx, a.webhook);
        return (await webhookDeliveries(ctx.store, a.webhook, a)).map(deliveryView);
      },
    ),
  },
  Mutation: {
    createWebhook: guarded(
      adminOrMember,
      inInput,
      async (a: { input: Omit<WebhookInput, "events"> & { events: string[] } }, ctx: ApiContext) => {
        const input = { ...a.input, events: a.input.events?.map(fromEnum) };
        await checkMemberInput(ctx, input);
        const parsed = parseWebhookInput(input);
        await checkTarget(parsed.url, parsed.allowPrivateTargets ?? false);
        const w = await createWebhook(ctx.store, actorOf(ctx), input);
        return view(w, w.secret);
      },
    ),
    deleteWebhook: guarded(adminOrMember, asArgs, async (a: { id: string }, ctx: ApiContext) => {
      await managedWebhook(ctx, a.id);
      return deleteWebhook(ctx.store, actorOf(ctx), a.id);
    }),
    enableWebhook: guarded(adminOrMember, asArgs, async (a: { id: string }, ctx: ApiContext) => {
      await managedWebhook(ctx, a.id);
      return view(await enableWebhook(ctx.store, actorOf(ctx), a.id));
    }),
  },
};
