// Dry runs of submissions: read the fleet, plan with admission's and the estimator's own code
// (workers/admission/dry-run.ts, pure), answer. What is kept between dry runs is what admission
// keeps between passes — a cache of the clusters (brought up to date by their changes, not read
// in full each time) and the bases built from it — made on the first dry run, so an API that
// answers none holds none. Dry runs go one at a time: they share those bases.
import { defaultSchedulerConfig, type SchedulerConfig, type Snapshot } from "../core/index.js";
import type { JobRuntime } from "../estimate/estimate-starts.js";
import {
  admissionCandidatesByIds,
  ClusterCache,
  clusterSummaries,
  jobRuntimeHints,
  type PreviewedJob,
  queueRuntimeSamples,
  type Store,
  unadmittedJobs,
  type UsageWindow,
} from "../store/index.js";
import {
  type AdmissionPlan,
  type DryRunAnswer,
  type DryRunJob,
  planAdmission,
  planRunnersUp,
  planStarts,
  type StartInputs,
} from "../../workers/admission/dry-run.js";
import { AdmissionState } from "../../workers/admission/state.js";
import { DEFAULT_ADMISSION_CHUNK } from "../../workers/options.js";

/** How long one dry run may go on estimating: past it, no more sessions are simulated and no
 * runner-up is read (admission's decision and the next cycle's evictions are always answered). */
export const DRY_RUN_BUDGET_MS = 800;
/** Sessions simulated per cluster, at most (the workers' estimates run up to 200). */
export const DRY_RUN_MAX_SESSIONS = 100;
/** How long the queues' recent run times are used again: they move as jobs finish. */
const QUEUE_RUNTIMES_TTL_MS = 30_000;
/** Declared run times kept, at most (a job's never changes). */
const MAX_KEPT_RUNTIMES = 200_000;

export class DryRuns {
  private held: { cache: ClusterCache; state: AdmissionState } | null = null;
  private last: Promise<unknown> = Promise.resolve();
  /** Declared run times by job, read once per job. */
  private readonly declared = new Map<string, JobRuntime>();
  private queueRuntimes: { at: number; samples: Map<string, number[]> } | null = null;

  constructor(
    private readonly store: Store,
    private readonly config: SchedulerConfig = defaultSchedulerConfig(),
    private readonly usageWindow: UsageWindow | null = null,
    private readonly budgetMs = DRY_RUN_BUDGET_MS,
  ) {}

  /** The answers for these jobs (previewed by the store: checked, never stored). */
  run(jobs: readonly PreviewedJob[]): Promise<DryRunAnswer[]> {
    const next = this.last.catch(() => {}).then(() => this.runNow(jobs));
    this.last = next;
    return next;
  }

  private async runNow(previewed: readonly PreviewedJob[]): Promise<DryRunAnswer[]> {
    this.held ??= (() => {
      // The workers' caches prune the change tombstones: a dry run writes nothing, not even that.
      const cache = new ClusterCache(this.store, { tombstoneRetentionMs: Number.POSITIVE_INFINITY });
      return { cache, state: new AdmissionState(cache) };
    })();
    const { cache, state } = this.held;
    const now = Date.now();
    const deadline = performance.now() + this.budgetMs;
    const usage = this.usageWindow ?? undefined;
    const [clusters, waiting] = await Promise.all([
      clusterSummaries(this.store),
      unadmittedJobs(this.store).then((list) =>
        admissionCandidatesByIds(
          this.store,
          list.map((j) => j.id),
        ),
      ),
    ]);
    await state.refresh(clusters, this.config, { now, usage });
    const jobs: DryRunJob[] = previewed.map((p) => ({ candidate: p.candidate, named: p.job.clusterName }));
    const plan = planAdmission(
      {
        clusters,
        bases: state.bases,
        waiting,
        config: this.config,
        batch: DEFAULT_ADMISSION_CHUNK.jobs,
        batchPods: DEFAULT_ADMISSION_CHUNK.pods,
      },
      jobs,
    );
    const read = (names: readonly string[]) => this.startInputs(cache, names, plan, previewed, now, deadline);
    const answers = planStarts(plan, await read(chosenClusters(plan)));
    if (performance.now() > deadline) return answers;
    return planRunnersUp(plan, answers, await read(runnersUp(plan)));
  }

  /** What the estimator needs on these clusters: their snapshots and the run times of their jobs. */
  private async startInputs(
    cache: ClusterCache,
    clusters: readonly string[],
    plan: AdmissionPlan,
    previewed: readonly PreviewedJob[],
    now: number,
    deadline: number,
  ): Promise<StartInputs> {
    const snapshots = await this.snapshotsOf(cache, clusters, now, this.usageWindow ?? undefined);
    return {
      config: this.config,
      snapshots,
      topologies: new Map(previewed.map((p) => [p.candidate.spec.uid, p.candidate.topologies])),
      estimate: {
        ...(await this.runtimes(snapshots, plan, previewed, now)),
        maxSessions: DRY_RUN_MAX_SESSIONS,
      },
      stop: () => performance.now() > deadline,
    };
  }

  private async snapshotsOf(
    cache: ClusterCache,
    clusters: readonly string[],
    now: number,
    usage: UsageWindow | undefined,
  ): Promise<Map<string, Snapshot>> {
    const read = await Promise.all(clusters.map((c) => cache.refresh(c, { now, usage })));
    return new Map(clusters.map((c, i) => [c, read[i]!.snapshot]));
  }

  /** The run times the estimator reads: declared ones (the new jobs' from their inputs) and each
   * queue's recent ones. */
  private async runtimes(
    snapshots: ReadonlyMap<string, Snapshot>,
    plan: AdmissionPlan,
    previewed: readonly PreviewedJob[],
    now: number,
  ) {
    const ids = [...snapshots.values(), { jobs: [...plan.sent.values()].flat() }].flatMap((s) =>
      s.jobs.map((j) => j.uid),
    );
    const fresh = new Set(previewed.map((p) => p.job.id));
    const [, samples] = await Promise.all([
      this.readDeclared(ids.filter((id) => !fresh.has(id))),
      this.queueSamples(now),
    ]);
    const ms = (s: number | null) => (s === null ? null : s * 1000);
    const runtimes = new Map<string, JobRuntime>();
    for (const id of ids) {
      const known = this.declared.get(id);
      if (known) runtimes.set(id, known);
    }
    for (const { job } of previewed)
      runtimes.set(job.id, { expectedMs: ms(job.expectedRuntimeSeconds), maxMs: ms(job.maxRuntimeSeconds) });
    const queueRuntimeSamplesMs = new Map([...samples].map(([q, list]) => [q, list.map((s) => s * 1000)]));
    return { runtimes, queueRuntimeSamplesMs };
  }

  /** Reads the declared run times of the jobs not read before (a job's never changes). */
  private async readDeclared(ids: readonly string[]): Promise<void> {
    const missing = ids.filter((id) => !this.declared.has(id));
    if (!missing.length) return;
    if (this.declared.size + missing.length > MAX_KEPT_RUNTIMES) this.declared.clear();
    const hints = await jobRuntimeHints(this.store, missing);
    const ms = (s: number | null) => (s === null ? null : s * 1000);
    for (const id of missing) {
      const h = hints.get(id);
      this.declared.set(id, { expectedMs: ms(h?.expectedSeconds ?? null), maxMs: ms(h?.maxSeconds ?? null) });
    }
  }

  private async queueSamples(now: number): Promise<Map<string, number[]>> {
    const held = this.queueRuntimes;
    if (held && now - held.at < QUEUE_RUNTIMES_TTL_MS) return held.samples;
    const samples = await queueRuntimeSamples(this.store, new Date(now));
    this.queueRuntimes = { at: now, samples };
    return samples;
  }
}

/** The clusters the plan sends the dry run's jobs to. */
const chosenClusters = (plan: AdmissionPlan): string[] =>
  [...new Set(plan.answers.flatMap((a) => (a.cluster ? [a.cluster] : [])))].sort();

/** The jobs' runners-up. */
const runnersUp = (plan: AdmissionPlan): string[] => [...new Set([...plan.runnersUp.values()].flat())].sort();
