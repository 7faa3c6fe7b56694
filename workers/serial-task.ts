// A task that runs one at a time across every worker process: a BullMQ queue with global
// concurrency 1 (BullMQ moves a job to active in a Redis script that checks the active count, so
// two processes can never both hold one), a job scheduler that runs it on a timer, and triggers
// deduplicated so a burst of work makes at most one run waiting behind the one running.
// The schedule and the concurrency limit live in Redis: a Redis that restarts empty loses them,
// and nothing would run on a timer again (an outbox request whose queue job vanished would never
// be sent again). Every process looks every interval and puts back whatever is missing.
import { Queue, Worker } from "bullmq";
import type { Redis } from "ioredis";
import type { Logger } from "pino";

export interface SerialTaskOptions {
  connection: Redis;
  /** BullMQ key prefix, e.g. "fleetq:cycle". */
  prefix: string;
  /** BullMQ queue name (no ':'), e.g. the cluster's name. */
  name: string;
  intervalMs: number;
  lockDurationMs: number;
  stalledIntervalMs: number;
  triggerDelayMs: number;
  log: Logger;
  /** The work; `reason` is "timer" or what triggered it. Errors are the caller's to record:
   * a throw only fails this run (the timer brings the next). */
  run: (reason: string) => Promise<void>;
}

const TIMER = "timer";

export class SerialTask {
  private readonly watch: NodeJS.Timeout;
  private checking: Promise<void> = Promise.resolve();
  private stopped = false;

  private constructor(
    readonly queue: Queue,
    private readonly worker: Worker,
    private readonly delayMs: number,
    private readonly o: SerialTaskOptions,
  ) {
    this.watch = setInterval(() => {
      this.checking = this.checking.then(() => this.restoreSchedule());
    }, o.intervalMs);
    this.watch.unref();
  }

  static async start(o: SerialTaskOptions): Promise<SerialTask> {
    const queue = new Queue(o.name, { connection: o.connection, prefix: o.prefix });
    queue.on("error", (err) => o.log.warn({ err: err.message, queue: o.name }, "queue error"));
    await schedule(queue, o.intervalMs);
    const worker = new Worker(o.name, async (job) => o.run(String(job.data?.reason ?? job.name)), {
      connection: o.connection,
      prefix: o.prefix,
      concurrency: 1,
      lockDuration: o.lockDurationMs,
      stalledInterval: o.stalledIntervalMs,
      // A dead worker's run is taken over; a run that keeps killing workers is given up on
      // (the timer brings a fresh one).
      maxStalledCount: 3,
    });
    worker.on("error", (err) => o.log.warn({ err: err.message, queue: o.name }, "worker error"));
    worker.on("stalled", (jobId) =>
      o.log.warn({ jobId, queue: o.name }, "taking over a run of a stopped worker"),
    );
    return new SerialTask(queue, worker, o.triggerDelayMs, o);
  }

  /** Puts back the timer and the concurrency limit when Redis lost them (restarted empty, or
   * lost its last writes: a schedule whose next run is gone never fires again). */
  private async restoreSchedule(): Promise<void> {
    if (this.stopped) return;
    try {
      if (await this.scheduleIntact()) return;
      if (this.stopped) return;
      await schedule(this.queue, this.o.intervalMs);
      this.o.log.warn({ queue: this.o.name }, "Redis had lost the task's timer; scheduled again");
    } catch (err) {
      // Redis away: the next look tries again.
      this.o.log.debug(
        { err: (err as Error).message, queue: this.o.name },
        "cannot look at the task's timer",
      );
    }
  }

  private async scheduleIntact(): Promise<boolean> {
    const timer = await this.queue.getJobScheduler(TIMER);
    if (timer?.next === undefined) return false;
    // BullMQ names a scheduler's next run after the scheduler and its time.
    if ((await this.queue.getJobState(`repeat:${TIMER}:${timer.next}`)) === "unknown") return false;
    return (await this.queue.getGlobalConcurrency()) === 1;
  }

  /** Asks for a run soon. At most one waits per `reason` while another runs; more triggers with
   * the same reason are absorbed (runs for different reasons are kept apart: a run may do less
   * for one reason than for another). */
  async trigger(reason: string): Promise<void> {
    await this.queue.add(
      "trigger",
      { reason },
      {
        deduplication: { id: `trigger:${reason}`, keepLastIfActive: true },
        delay: this.delayMs || undefined,
        removeOnComplete: true,
        removeOnFail: 100,
      },
    );
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.watch);
    await this.checking;
    await this.worker.close();
    await this.queue.close();
  }

  /** For a task that is gone for good (a deleted cluster): its schedule goes too. */
  async removeSchedule(): Promise<void> {
    this.stopped = true;
    clearInterval(this.watch);
    await this.checking;
    await this.queue.removeJobScheduler(TIMER);
  }
}

/** One concurrency limit and one timer (upserting is idempotent: every process does it, one
 * schedule results). */
async function schedule(queue: Queue, intervalMs: number): Promise<void> {
  await queue.setGlobalConcurrency(1);
  await queue.upsertJobScheduler(
    TIMER,
    { every: intervalMs },
    { name: TIMER, data: { reason: TIMER }, opts: { removeOnComplete: true, removeOnFail: 100 } },
  );
}
