// The scheduling cycles of the clusters this worker owns: one LocalTask per cluster (one cycle at
// a time, on the cycle timer and soon after triggers), started when ownership hands the cluster
// over and stopped — the running cycle finished — before the cluster moves on. A trigger for a
// cluster another worker owns goes to that worker as a signal.
import type { Logger } from "pino";
import { LocalTask } from "./local-task.js";

export interface CycleTaskOptions {
  intervalMs: number;
  triggerDelayMs: number;
}

export class ClusterCycles {
  private readonly tasks = new Map<string, LocalTask>();
  /** Clusters taken whose first cycle (a full load) has not finished yet. */
  private readonly loading = new Set<string>();
  /** Told when a cluster's first cycle has finished (ownership may take the next one). */
  onLoaded: (() => void) | null = null;

  constructor(
    private readonly options: CycleTaskOptions,
    private readonly run: (cluster: string, reason: string) => Promise<void>,
    /** Asks the other workers for these clusters' cycles. */
    private readonly forward: (clusters: string[] | "all", reason: string) => Promise<void>,
    private readonly log: Logger,
  ) {}

  /** The clusters whose cycles run here. */
  get clusters(): string[] {
    return [...this.tasks.keys()].sort();
  }

  /** The clusters whose cycles run here and whose first cycle has finished (their view loaded). */
  get loaded(): string[] {
    return this.clusters.filter((c) => !this.loading.has(c));
  }

  /** How many clusters taken here are still in their first cycle. */
  get loadingCount(): number {
    return this.loading.size;
  }

  /** Cycles of the cluster run here from now on; the first at once. */
  start(cluster: string, reason: string): void {
    if (this.tasks.has(cluster)) return;
    this.loading.add(cluster);
    const task = new LocalTask({
      name: `cycle:${cluster}`,
      ...this.options,
      log: this.log,
      run: (why) =>
        this.run(cluster, why).finally(() => {
          if (this.loading.delete(cluster)) this.onLoaded?.();
        }),
    });
    this.tasks.set(cluster, task);
    task.trigger(reason);
  }

  /** No more cycles of the cluster here; resolves once the running one has finished. */
  async stop(cluster: string): Promise<void> {
    const task = this.tasks.get(cluster);
    this.tasks.delete(cluster);
    await task?.stop();
    this.loading.delete(cluster);
  }

  /** Asks for a cycle of these clusters (all: every cluster) soon, wherever they are owned. */
  async trigger(clusters: readonly string[] | "all", reason: string): Promise<void> {
    this.triggerHere(clusters, reason);
    const elsewhere = clusters === "all" ? "all" : clusters.filter((c) => !this.tasks.has(c));
    if (elsewhere === "all" || elsewhere.length) await this.forward(elsewhere, reason);
  }

  /** The same for the clusters owned here only (every worker hears the events that ask). */
  triggerHere(clusters: readonly string[] | "all", reason: string): void {
    const names = clusters === "all" ? this.clusters : clusters;
    for (const c of names) this.tasks.get(c)?.trigger(reason);
  }

  async stopAll(): Promise<void> {
    await Promise.all(this.clusters.map((c) => this.stop(c)));
  }
}
