// The outbox's sending half: BindRequest rows → jobs on the cluster's bind queue (`bind:<cluster>`,
// one addBulk per cluster), then the rows are marked DISPATCHED. The BullMQ job id is the row id:
// sending a row whose job is still queued is a no-op, and agents answer a repeat from their
// recorded outcome, so a row sent twice (a crash between addBulk and the mark) does no harm.
import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import { bindQueueName } from "../../src/protocol/bind-request.js";
import {
  type BindRequest,
  bindRequestMessages,
  bindRequestsToDispatch,
  markBindRequestsDispatched,
  type Store,
} from "../../src/store/index.js";
import { dispatchedTotal } from "../metrics.js";

const PAGE = 1000;

export class BindDispatcher {
  private readonly queues = new Map<string, Queue>();

  constructor(
    private readonly store: Store,
    private readonly connection: Redis,
    private readonly prefix: string,
  ) {}

  /** The cluster's bind queue (for the sweeper's look at what is still queued). */
  queue(cluster: string): Queue {
    let q = this.queues.get(cluster);
    if (!q) {
      q = new Queue(bindQueueName(cluster), { connection: this.connection, prefix: this.prefix });
      q.on("error", () => {}); // the connection reconnects; failed sends surface as rejections
      this.queues.set(cluster, q);
    }
    return q;
  }

  /** Sends these rows; returns how many were put on queues. */
  async send(
    rows: readonly Pick<BindRequest, "id" | "clusterName">[],
    via: "cycle" | "sweeper",
  ): Promise<number> {
    const byCluster = new Map<string, string[]>();
    for (const r of rows) {
      const ids = byCluster.get(r.clusterName);
      if (ids) ids.push(r.id);
      else byCluster.set(r.clusterName, [r.id]);
    }
    let sent = 0;
    for (const [cluster, ids] of byCluster) {
      for (let i = 0; i < ids.length; i += PAGE) {
        const page = ids.slice(i, i + PAGE);
        const messages = await bindRequestMessages(this.store, page);
        await this.queue(cluster).addBulk(
          messages.map((data) => ({ name: data.kind, data, opts: { jobId: data.id } })),
        );
        await markBindRequestsDispatched(this.store, page);
        dispatchedTotal.inc({ cluster, via }, messages.length);
        sent += messages.length;
      }
    }
    return sent;
  }

  /** Every PENDING row of the cluster (a cycle's own, and evictions of cancelled jobs). */
  async sendPending(cluster: string): Promise<number> {
    let sent = 0;
    for (;;) {
      const rows = await bindRequestsToDispatch(this.store, { cluster, limit: PAGE });
      if (!rows.length) return sent;
      sent += await this.send(rows, "cycle");
      if (rows.length < PAGE) return sent;
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.queues.values()].map((q) => q.close()));
    this.queues.clear();
  }
}
