// Webhooks as plain data: which events exist, which recorded event kinds they come from, which
// webhooks an event goes to, the body sent, and what an attempt's outcome changes. No database.
import type { LabelMatch } from "../validation/names.js";
import type { QueueTree } from "./queue-tree.js";

/** The events a webhook may ask for, by the names payloads carry. */
export const WEBHOOK_EVENTS = [
  "job.succeeded",
  "job.failed",
  "job.preempted",
  "job.restarted",
  "job.waiting_past_estimate",
  "cluster.lost",
] as const;
export type WebhookEventName = (typeof WEBHOOK_EVENTS)[number];

/** The event log's kind each webhook event is recorded as (the outbox trigger lists the same
 * kinds). A scheduling cycle's eviction of a job's pods is its preemption. */
const SOURCE_KINDS: Record<string, WebhookEventName> = {
  "job.succeeded": "job.succeeded",
  "job.failed": "job.failed",
  "pods.evicted": "job.preempted",
  "job.restarted": "job.restarted",
  "job.waiting_past_estimate": "job.waiting_past_estimate",
  "cluster.lost": "cluster.lost",
};

export const webhookEventOf = (kind: string): WebhookEventName | null => SOURCE_KINDS[kind] ?? null;

/** The event log's kinds webhooks report (those the outbox trigger keeps). */
export const WEBHOOK_SOURCE_KINDS: ReadonlySet<string> = new Set(Object.keys(SOURCE_KINDS));

/** Finished deliveries kept per webhook (the newest); older ones are pruned as new ones come. */
export const WEBHOOK_DELIVERY_LOG = 200;

/** Failed deliveries in a row after which a webhook is disabled, unless configured otherwise. */
export const DEFAULT_WEBHOOK_DISABLE_AFTER = 10;

/** Labels against a selector: every entry must hold (label key In values). */
export const matchesSelector = (labels: Record<string, string>, selector: readonly LabelMatch[]): boolean =>
  selector.every((m) => labels[m.key] !== undefined && m.values.includes(labels[m.key]!));

/** What a webhook listens to. */
export interface WebhookFilter {
  id: string;
  events: readonly string[];
  /** Queue subtrees; empty: every queue. */
  queues: readonly string[];
  labels: readonly LabelMatch[];
}

/** A recorded event, with its job as it is when the event is fanned out. */
export interface WebhookSourceEvent {
  id: string;
  at: Date;
  kind: string;
  message: string;
  queue: string | null;
  cluster: string | null;
  job: WebhookJob | null;
}

export interface WebhookJob {
  id: string;
  name: string;
  queue: string;
  cluster: string | null;
  state: string;
  labels: Record<string, string>;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  restarts: number;
  /** The start first estimated for it while pending, if any. */
  estimatedStart: Date | null;
}

/** Whether the webhook takes the event. Cluster events have no queue or labels: every webhook
 * asking for them gets them (cluster states are visible to every role). */
export function webhookTakes(w: WebhookFilter, e: WebhookSourceEvent, tree: QueueTree): boolean {
  const name = webhookEventOf(e.kind);
  if (!name || !w.events.includes(name)) return false;
  if (!e.job) return name === "cluster.lost";
  const queue = e.job.queue;
  if (w.queues.length && !w.queues.some((root) => tree.isWithin(queue, root))) return false;
  return matchesSelector(e.job.labels, w.labels);
}

/** Dates as ISO-8601 strings, as JSON carries them. */
type WithIsoDates<T> = {
  [K in keyof T]: T[K] extends Date ? string : T[K] extends Date | null ? string | null : T[K];
};

/** The JSON body of a delivery: `text` for chat tools, the structured fields beside it. */
export interface WebhookPayload {
  text: string;
  event: WebhookEventName;
  /** The event log row's id: the same event never comes twice under another id. */
  eventId: string;
  at: string;
  message: string;
  queue: string | null;
  cluster: string | null;
  job: WithIsoDates<WebhookJob> | null;
  /** A job event's page on the dashboard (`#job=<id>`), a cluster event's the dashboard itself,
   * when the workers know the public address; else null. */
  link: string | null;
}

const iso = (d: Date | null): string | null => d?.toISOString() ?? null;

/** The one-line summary chat tools show. */
export function summaryOf(name: WebhookEventName, e: WebhookSourceEvent): string {
  const j = e.job;
  const where = j ? ` (queue ${j.queue}${j.cluster ? `, cluster ${j.cluster}` : ""})` : "";
  const subject = j ? `job ${j.name}` : `cluster ${e.cluster ?? "?"}`;
  const what: Record<WebhookEventName, string> = {
    "job.succeeded": "succeeded",
    "job.failed": `failed: ${e.message}`,
    "job.preempted": "preempted: its pods are being evicted",
    "job.restarted": `restarted (attempt ${(j?.restarts ?? 0) + 1})`,
    "job.waiting_past_estimate": `still pending past its estimated start ${iso(j?.estimatedStart ?? null) ?? ""}`,
    "cluster.lost": `lost: ${e.message}`,
  };
  return `[fleetq] ${subject}${where} ${what[name]}`;
}

/** The dashboard's page of the job (`#job=<id>`, what the dashboard routes on), or the dashboard. */
export function dashboardLink(dashboard: string | null, jobId: string | null): string | null {
  if (!dashboard || !jobId) return dashboard;
  const url = new URL(dashboard);
  url.hash = `job=${encodeURIComponent(jobId)}`;
  return url.toString();
}

/** `dashboard`: the dashboard's public address, or null. */
export function webhookPayload(e: WebhookSourceEvent, dashboard: string | null): WebhookPayload {
  const name = webhookEventOf(e.kind)!;
  const j = e.job;
  return {
    text: summaryOf(name, e),
    event: name,
    eventId: e.id,
    at: e.at.toISOString(),
    message: e.message,
    queue: j?.queue ?? e.queue,
    cluster: j?.cluster ?? e.cluster,
    job: j && {
      ...j,
      createdAt: j.createdAt.toISOString(),
      startedAt: iso(j.startedAt),
      finishedAt: iso(j.finishedAt),
      estimatedStart: iso(j.estimatedStart),
    },
    link: dashboardLink(dashboard, j?.id ?? null),
  };
}

export interface PlannedDelivery {
  webhookId: string;
  eventId: string;
  event: WebhookEventName;
  jobId: string | null;
  payload: WebhookPayload;
}

/** One delivery per event and webhook that takes it, in event order. */
export function planDeliveries(
  events: readonly WebhookSourceEvent[],
  webhooks: readonly WebhookFilter[],
  tree: QueueTree,
  link: string | null,
): PlannedDelivery[] {
  const out: PlannedDelivery[] = [];
  for (const e of events) {
    const takers = webhooks.filter((w) => webhookTakes(w, e, tree));
    if (!takers.length) continue;
    const payload = webhookPayload(e, link);
    for (const w of takers)
      out.push({ webhookId: w.id, eventId: e.id, event: payload.event, jobId: e.job?.id ?? null, payload });
  }
  return out;
}

/** How one attempt went. `final`: no attempt follows (the last one, or a refusal not worth
 * repeating). */
export interface AttemptOutcome {
  ok: boolean;
  responseCode: number | null;
  error: string | null;
  final: boolean;
}

export interface AttemptPlan {
  state: "PENDING" | "SUCCEEDED" | "FAILED";
  /** The webhook's failures in a row after this attempt. */
  consecutiveFailures: number;
  /** Set when this attempt disables the webhook: why. */
  disable: string | null;
}

/** A success resets the webhook's run of failures; a delivery given up on adds one, and the
 * `disableAfter`-th in a row disables the webhook. */
export function planAttempt(
  o: AttemptOutcome,
  webhook: { consecutiveFailures: number; enabled: boolean },
  disableAfter: number,
): AttemptPlan {
  if (o.ok) return { state: "SUCCEEDED", consecutiveFailures: 0, disable: null };
  if (!o.final) return { state: "PENDING", consecutiveFailures: webhook.consecutiveFailures, disable: null };
  const failures = webhook.consecutiveFailures + 1;
  const disable =
    webhook.enabled && failures >= disableAfter
      ? `disabled after ${failures} failed deliveries in a row (last: ${o.error ?? `HTTP ${o.responseCode}`})`
      : null;
  return { state: "FAILED", consecutiveFailures: failures, disable };
}
