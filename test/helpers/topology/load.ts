// A steady load on a topology: gangs of 1–8 pods (whole GPUs, GPU fractions, GPU memory) with
// short run times at a fixed rate, some cancelled soon after, and quotas changed now and then.
// Every submission carries an idempotency key and is retried until an API replica takes it, so
// each accepted one must exist exactly once. Bounded by a count and by `stop()`.
import { seededRandom } from "../../../src/core/index.js";
import { ApiError, type ApiClient } from "./client.js";
import { FAULT_QUEUES, LIMITED_QUEUE } from "./topology.js";

export interface LoadOptions {
  /** Submissions per second. */
  rate: number;
  /** At most this many submissions in all. */
  maxSubmissions: number;
  /** Fraction of jobs cancelled a moment after they are accepted. */
  cancelShare?: number;
  /** How often the quotas of the unlimited queues change (0 = never). */
  quotaEveryMs?: number;
  seed?: number;
  /** Clusters a job may name (otherwise admission chooses). */
  clusters: string[];
}

const MAX_IN_FLIGHT = 200;

export class LoadGenerator {
  /** idempotency key → job id, for every submission an API replica accepted. */
  readonly accepted = new Map<string, string>();
  /** Submissions that never got an answer or were refused (with why). */
  readonly refused = new Map<string, string>();
  readonly cancelled = new Set<string>();
  readonly errors: string[] = [];
  submitted = 0;
  private readonly rnd: () => number;
  private readonly inFlight = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | null = null;
  private quotaTimer: NodeJS.Timeout | null = null;
  private readonly run = Math.random().toString(36).slice(2, 8);

  constructor(
    private readonly client: ApiClient,
    private readonly opts: LoadOptions,
  ) {
    this.rnd = seededRandom(opts.seed ?? 1);
  }

  start(): void {
    this.timer = setInterval(() => this.tick(), 1000 / this.opts.rate);
    if (this.opts.quotaEveryMs)
      this.quotaTimer = setInterval(
        () => this.track(this.changeQuotas().catch((e: Error) => void this.errors.push(e.message))),
        this.opts.quotaEveryMs,
      );
  }

  /** Stops submitting and waits for every request under way. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (this.quotaTimer) clearInterval(this.quotaTimer);
    this.timer = this.quotaTimer = null;
    while (this.inFlight.size) await Promise.allSettled([...this.inFlight]);
  }

  get done(): boolean {
    return this.submitted >= this.opts.maxSubmissions;
  }

  private tick(): void {
    if (this.done || this.inFlight.size >= MAX_IN_FLIGHT) return;
    const n = this.submitted++;
    this.track(this.submit(`${this.run}-${n}`, n));
  }

  private track(p: Promise<void>): void {
    const tracked = p.finally(() => this.inFlight.delete(tracked));
    this.inFlight.add(tracked);
  }

  private async submit(key: string, n: number): Promise<void> {
    const input = this.jobInput(key, n);
    try {
      const r = await this.client.ok<{ submitJob: { id: string } }>(
        "mutation($i: SubmitJobInput!) { submitJob(input: $i) { id } }",
        { i: input },
        120_000,
      );
      this.accepted.set(key, r.submitJob.id);
    } catch (err) {
      this.refused.set(key, (err as Error).message);
      return;
    }
    if (this.rnd() < (this.opts.cancelShare ?? 0.05)) {
      await new Promise((res) => setTimeout(res, 200 + this.rnd() * 2000));
      await this.cancel(this.accepted.get(key)!);
    }
  }

  private async cancel(id: string): Promise<void> {
    try {
      await this.client.ok("mutation($id: ID!) { cancelJob(id: $id) { id } }", { id }, 120_000);
      this.cancelled.add(id);
    } catch (err) {
      // a job that finished first cannot be cancelled: fine
      if (!(err instanceof ApiError && err.code === "CONFLICT")) this.errors.push((err as Error).message);
    }
  }

  /** Deserved GPUs of the two unlimited queues move around, so reclaim and preemption happen. */
  private async changeQuotas(): Promise<void> {
    for (const queue of FAULT_QUEUES.filter((q) => q !== LIMITED_QUEUE)) {
      await this.client.setQuota({
        queue,
        resource: "GPU",
        deserved: 8 + Math.floor(this.rnd() * 40),
        overQuotaWeight: 1 + Math.floor(this.rnd() * 3),
      });
    }
  }

  private jobInput(key: string, n: number): Record<string, unknown> {
    const r = this.rnd;
    const queue = FAULT_QUEUES[Math.floor(r() * FAULT_QUEUES.length)]!;
    const replicas = 1 + Math.floor(r() * 8);
    const kind = r();
    // the limited queue asks whole GPUs only, so its limit is a plain count
    const resources =
      queue === LIMITED_QUEUE || kind < 0.7
        ? { cpu: 1000, memory: "4Gi", gpu: 1 }
        : kind < 0.85
          ? { cpu: 500, memory: "2Gi", gpu: r() < 0.5 ? 0.5 : 0.25 }
          : { cpu: 500, memory: "2Gi", gpuMemory: 10240 };
    const pinned = r() < 0.3 ? this.opts.clusters[Math.floor(r() * this.opts.clusters.length)] : undefined;
    return {
      name: `load-${n}`,
      queue,
      idempotencyKey: key,
      ...(pinned ? { cluster: pinned } : {}),
      tasks: [{ name: "w", replicas, resources, durationSeconds: 1 + Math.floor(r() * 4) }],
    };
  }
}
