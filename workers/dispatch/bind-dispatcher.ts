// The outbox's sending half: BindRequest rows → jobs on the cluster's bind queue (`bind:<cluster>`,
// one addBulk per cluster), then the rows are marked DISPATCHED. The BullMQ job id is the row id:
// sending a row whose job is still queued is a no-op, and agents answer a repeat from their
// recorded outcome, so a row sent twice (a crash between addBulk and the mark) does no harm.
// Every message is signed with its cluster's key (bind-request.ts): agents refuse unsigned ones.
import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import {
  bindQueueName,
  bindRequestKey,
  defaultBindSecret,
  signBindRequest,
} from "../../src/protocol/bind-request.js";
import {
  type BindRequest,
  bindRequestMessages,
  bindRequestsToDispatch,
  markBindRequestsDispatched,
  type Store,
} from "../../src/store/index.js";
import { dispatchedTotal } from "../metrics.js";

const PAGE = 1000;

export type QueueState = "queued" | "finished" | "missing";

type Row = Pick<BindRequest, "id" | "clusterName">;

/** Rows by cluster, in their order (one pass: linear in the rows). */
function byCluster<T extends Row>(rows: readonly T[]): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const r of rows) {
    const list = out.get(r.clusterName);
    if (list) list.push(r);
    else out.set(r.clusterName, [r]);
  }
  return out;
}

/** The promise itself, marked as handled: a failure still rejects where it is awaited, and one
 * left unawaited because an earlier step failed is not reported as unhandled. */
function quiet<T>(p: Promise<T>): Promise<T> {
  p.catch(() => {});
  return p;
}

export class BindDispatcher {
  private readonly queues = new Map<string, Queue>();
  private readonly keys = new Map<string, string>();

  constructor(
    private readonly store: Store,
    private readonly connection: Redis,
    private readonly prefix: string,
    /** The control plane's BindRequest secret (FLEETQ_BIND_SECRET, else this process's own). */
    private readonly bindSecret: string = defaultBindSecret(),
  ) {}

  /** The key `cluster`'s messages are signed with. */
  private keyOf(cluster: string): string {
    let key = this.keys.get(cluster);
    if (!key) {
      key = bindRequestKey(this.bindSecret, cluster);
      this.keys.set(cluster, key);
    }
    return key;
  }

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

  /**
   * Where each request's job stands on its cluster's queue: "queued" (waiting, delayed or being
   * carried out), "finished" (completed or failed, still kept) or "missing". One HMGET of the
   * job's hash per request, pipelined: the same cost whatever the queue's backlog.
   */
  async queueStates(rows: readonly Row[]): Promise<Map<string, QueueState>> {
    const states = new Map<string, QueueState>();
    for (const [cluster, list] of byCluster(rows)) {
      const queue = this.queue(cluster);
      const pipeline = this.connection.pipeline();
      for (const r of list) pipeline.hmget(queue.toKey(r.id), "timestamp", "finishedOn");
      const replies = (await pipeline.exec()) ?? [];
      list.forEach((r, i) => {
        const [err, fields] = replies[i] ?? [new Error("no reply"), null];
        if (err) throw err;
        const [createdAt, finishedOn] = fields as (string | null)[];
        states.set(r.id, createdAt === null ? "missing" : finishedOn === null ? "queued" : "finished");
      });
    }
    return states;
  }

  /** Sends these rows; returns how many were put on queues. Pages overlap: while a page goes onto
   * its queue, the next page's messages are read and handed to Redis behind it (one connection:
   * they land in order), and the page before is marked DISPATCHED (a page is marked only once it
   * is on the queue). */
  async send(rows: readonly Row[], via: "cycle" | "sweeper"): Promise<number> {
    let sent = 0;
    for (const [cluster, list] of byCluster(rows)) {
      const queue = this.queue(cluster);
      const key = this.keyOf(cluster);
      const pages: string[][] = [];
      for (let i = 0; i < list.length; i += PAGE) pages.push(list.slice(i, i + PAGE).map((r) => r.id));
      let reading = quiet(bindRequestMessages(this.store, pages[0]!));
      let adding: Promise<number> | null = null;
      let marking: Promise<unknown> = Promise.resolve();
      const landed = async (page: number, on: Promise<number>) => {
        const n = await on;
        await marking;
        marking = quiet(markBindRequestsDispatched(this.store, pages[page]!));
        dispatchedTotal.inc({ cluster, via }, n);
        sent += n;
      };
      for (let p = 0; p < pages.length; p++) {
        const messages = await reading;
        if (p + 1 < pages.length) reading = quiet(bindRequestMessages(this.store, pages[p + 1]!));
        const add = quiet(
          queue
            .addBulk(
              messages.map((m) => ({ name: m.kind, data: signBindRequest(m, key), opts: { jobId: m.id } })),
            )
            .then(() => messages.length),
        );
        if (adding) await landed(p - 1, adding);
        adding = add;
      }
      if (adding) await landed(pages.length - 1, adding);
      await marking;
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
