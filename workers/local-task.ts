// Work this process runs for itself, one run at a time: on a timer, and soon after a trigger (at
// most one run waits behind the one running, whatever number of triggers asked for it). A
// cluster's cycles run so on the worker that owns the cluster (ownership keeps other processes
// off it); so do the estimates and usage history of the clusters a worker owns.
import type { Logger } from "pino";

export interface LocalTaskOptions {
  name: string;
  intervalMs: number;
  /** A trigger's run starts this long after it (triggers meanwhile join it). */
  triggerDelayMs: number;
  log: Logger;
  /** `reason`: "timer" or what triggered it. A throw is logged; the next run comes as usual. */
  run: (reason: string) => Promise<void>;
}

export class LocalTask {
  private readonly timer: NodeJS.Timeout;
  private delay: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private waiting: string | null = null;
  private stopped = false;

  constructor(private readonly o: LocalTaskOptions) {
    this.timer = setInterval(() => {
      if (!this.running && this.waiting === null) this.ask("timer", 0);
    }, o.intervalMs);
    this.timer.unref();
  }

  /** Asks for a run soon. */
  trigger(reason: string): void {
    this.ask(reason, this.o.triggerDelayMs);
  }

  /** Whether a run is under way. */
  get busy(): boolean {
    return this.running !== null;
  }

  private ask(reason: string, delayMs: number): void {
    if (this.stopped) return;
    this.waiting ??= reason;
    if (this.running || this.delay) return;
    if (delayMs <= 0) {
      this.start();
      return;
    }
    this.delay = setTimeout(() => {
      this.delay = null;
      if (!this.running) this.start();
    }, delayMs);
  }

  private start(): void {
    if (this.stopped || this.waiting === null) return;
    const reason = this.waiting;
    this.waiting = null;
    this.running = this.o
      .run(reason)
      .catch((err) => this.o.log.error({ task: this.o.name, err: (err as Error).message }, "run failed"))
      .finally(() => {
        this.running = null;
        if (this.waiting !== null && !this.delay) this.start();
      });
  }

  /** No run starts any more; waits for the one under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    if (this.delay) clearTimeout(this.delay);
    this.delay = null;
    await this.running;
  }
}
