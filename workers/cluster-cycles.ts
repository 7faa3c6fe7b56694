// One serial cycle task per registered cluster (BullMQ queue `<prefix>cycle:<cluster>` with global
// concurrency 1): started when a cluster appears, stopped — and its timer removed — when it is
// deleted. Every worker process runs them all; BullMQ hands each run to exactly one process.
import type { Logger } from "pino";
import { clusterSummaries, type Store } from "../src/store/index.js";
import { SerialTask, type SerialTaskOptions } from "./serial-task.js";

export type CycleTaskOptions = Omit<SerialTaskOptions, "name" | "run" | "log">;

export class ClusterCycles {
  private readonly tasks = new Map<string, SerialTask>();
  private refreshing: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly store: Store,
    private readonly options: CycleTaskOptions,
    private readonly run: (cluster: string, reason: string) => Promise<void>,
    private readonly log: Logger,
  ) {}

  get clusters(): string[] {
    return [...this.tasks.keys()].sort();
  }

  /** Re-reads the cluster list (calls are serialised). */
  refresh(): Promise<void> {
    this.refreshing = this.refreshing
      .then(() => this.sync())
      .catch((err) => {
        this.log.warn({ err: (err as Error).message }, "could not refresh the cluster list");
      });
    return this.refreshing;
  }

  private async sync(): Promise<void> {
    if (this.stopped) return;
    const names = new Set((await clusterSummaries(this.store)).map((c) => c.name));
    for (const name of names) {
      if (this.tasks.has(name)) continue;
      const task = await SerialTask.start({
        ...this.options,
        name,
        log: this.log,
        run: (reason) => this.run(name, reason),
      });
      this.tasks.set(name, task);
      this.log.info({ cluster: name }, "scheduling cycles started");
    }
    for (const [name, task] of this.tasks) {
      if (names.has(name)) continue;
      this.tasks.delete(name);
      await task.removeSchedule();
      await task.stop();
      this.log.info({ cluster: name }, "cluster deleted: scheduling cycles stopped");
    }
  }

  /** Asks for a cycle of these clusters (all: every cluster) soon. */
  async trigger(clusters: readonly string[] | "all", reason: string): Promise<void> {
    const names = clusters === "all" ? this.clusters : clusters;
    if (names.some((c) => !this.tasks.has(c))) await this.refresh();
    await Promise.all(names.map((c) => this.tasks.get(c)?.trigger(reason)));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.refreshing;
    await Promise.all([...this.tasks.values()].map((t) => t.stop()));
    this.tasks.clear();
  }
}
