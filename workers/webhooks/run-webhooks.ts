// The fleet-wide webhook task (one run at a time across the workers): late start estimates
// recorded as events, recorded events fanned out to deliveries and queued, and deliveries whose
// queue job was lost (a Redis restarted empty, a crash between commit and queueing) queued again.
import type { Logger } from "pino";
import {
  fanOutWebhookEvents,
  pendingWebhookDeliveries,
  reportOverdueStarts,
  type Store,
} from "../../src/store/index.js";
import { WEBHOOK_ACTOR, type WebhookDeliveries } from "./webhook-deliveries.js";

/** Outbox rows fanned out per transaction. */
const FAN_OUT_BATCH = 500;
/** Pending deliveries older than this are queued again (a no-op for those still queued). */
const REQUEUE_AFTER_MS = 60_000;

export interface WebhookTaskOptions {
  estimateGraceMs: number;
  /** How often late start estimates are looked for. */
  estimateCheckMs: number;
  publicUrl: string;
}

export interface WebhookReport {
  overdue: number;
  deliveries: number;
  requeued: number;
}

export class WebhookTask {
  private checkedAt = 0;

  constructor(
    private readonly store: Store,
    private readonly deliveries: WebhookDeliveries,
    private readonly o: WebhookTaskOptions,
    private readonly log: Logger,
  ) {}

  async run(now = new Date()): Promise<WebhookReport> {
    let overdue = 0;
    if (now.getTime() - this.checkedAt >= this.o.estimateCheckMs) {
      this.checkedAt = now.getTime();
      overdue = (
        await reportOverdueStarts(this.store, WEBHOOK_ACTOR, { now, graceMs: this.o.estimateGraceMs })
      ).length;
    }
    let deliveries = 0;
    for (;;) {
      const r = await fanOutWebhookEvents(this.store, {
        limit: FAN_OUT_BATCH,
        link: this.o.publicUrl || null,
      });
      await this.deliveries.enqueue(r.deliveries);
      deliveries += r.deliveries.length;
      if (r.claimed < FAN_OUT_BATCH) break;
    }
    const lost = await pendingWebhookDeliveries(this.store, new Date(now.getTime() - REQUEUE_AFTER_MS), 1000);
    await this.deliveries.enqueue(lost);
    const report = { overdue, deliveries, requeued: lost.length };
    if (overdue || deliveries) this.log.debug(report, "webhook events fanned out");
    return report;
  }
}
