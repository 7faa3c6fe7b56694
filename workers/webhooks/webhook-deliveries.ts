// Webhook deliveries on a BullMQ queue of their own (`<prefix>workers:webhook-deliveries`), worked
// on by every worker process: one queue job per delivery (its id the delivery's, so a delivery
// queued twice is one job), retried with exponential backoff. Each attempt is recorded in the
// delivery log before the next is scheduled; the last failed one may disable the webhook.
import { Queue, Worker } from "bullmq";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { recordWebhookAttempt, type Store, webhookDeliveryToSend } from "../../src/store/index.js";
import { sendWebhook } from "../../src/webhooks/send.js";
import { webhookAttemptsTotal, webhooksDisabledTotal } from "../metrics.js";

export const WEBHOOK_ACTOR = { name: "webhooks" };
const QUEUE = "webhook-deliveries";

export interface WebhookDeliveryOptions {
  store: Store;
  connection: Redis;
  /** BullMQ key prefix (the workers' own). */
  prefix: string;
  attempts: number;
  backoffMs: number;
  disableAfter: number;
  timeoutMs: number;
  concurrency: number;
  lockDurationMs: number;
  log: Logger;
}

export class WebhookDeliveries {
  private constructor(
    private readonly queue: Queue,
    private readonly worker: Worker,
    private readonly o: WebhookDeliveryOptions,
  ) {}

  static start(o: WebhookDeliveryOptions): WebhookDeliveries {
    const queue = new Queue(QUEUE, { connection: o.connection, prefix: o.prefix });
    queue.on("error", (err) => o.log.warn({ err: err.message, queue: QUEUE }, "queue error"));
    const worker = new Worker(QUEUE, async (job) => attempt(o, String(job.data.delivery)), {
      connection: o.connection,
      prefix: o.prefix,
      concurrency: o.concurrency,
      lockDuration: Math.max(o.lockDurationMs, o.timeoutMs * 2),
    });
    worker.on("error", (err) => o.log.warn({ err: err.message, queue: QUEUE }, "worker error"));
    return new WebhookDeliveries(queue, worker, o);
  }

  /** Queues the deliveries; one already queued (or waiting for its retry) stays as it is. */
  async enqueue(ids: readonly string[]): Promise<void> {
    if (!ids.length) return;
    await this.queue.addBulk(
      ids.map((delivery) => ({
        name: "deliver",
        data: { delivery },
        opts: {
          jobId: delivery,
          attempts: this.o.attempts,
          backoff: { type: "exponential", delay: this.o.backoffMs },
          removeOnComplete: true,
          removeOnFail: true,
        },
      })),
    );
  }

  async close(): Promise<void> {
    await this.worker.close();
    await this.queue.close();
  }
}

/** One attempt: sent, recorded; a failure with attempts left throws, for BullMQ to retry. */
async function attempt(o: WebhookDeliveryOptions, id: string): Promise<void> {
  const d = await webhookDeliveryToSend(o.store, id);
  if (!d) return;
  const payload = d.payload as { event: string };
  const outcome = await sendWebhook({
    url: d.webhook.url,
    secret: d.webhook.secret,
    allowPrivateTargets: d.webhook.allowPrivateTargets,
    body: JSON.stringify(d.payload),
    event: payload.event,
    delivery: d.id,
    timeoutMs: o.timeoutMs,
  });
  webhookAttemptsTotal.inc({ outcome: outcome.ok ? "succeeded" : outcome.refused ? "refused" : "failed" });
  const final = outcome.refused || d.attempts + 1 >= o.attempts;
  const r = await recordWebhookAttempt(o.store, WEBHOOK_ACTOR, {
    ...outcome,
    final,
    delivery: d.id,
    disableAfter: o.disableAfter,
  });
  if (r?.disabled) {
    webhooksDisabledTotal.inc();
    o.log.warn({ webhook: d.webhook.id, err: outcome.error }, "webhook disabled after failed deliveries");
  }
  if (!outcome.ok && !final) throw new Error(`webhook delivery ${id}: ${outcome.error}`);
}
