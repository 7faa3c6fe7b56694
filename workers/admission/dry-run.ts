// What submitting jobs would do now, planned by the code that will do it: admission's `decide` on
// views of the clusters' bases (the jobs already waiting for admission decided first, in
// admission's order, as the next pass would), then, on each cluster a job would go to, the start
// estimator (src/estimate) on the cluster's snapshot with the jobs sent there: its first session
// is the cluster's next cycle (what it evicts now), the later ones what it evicts before the job
// starts, and when. Pure: the caller reads the fleet (bases, snapshots, run times) and answers.
import type { PodGroupSpec, SchedulerConfig, SessionResult, Snapshot } from "../../src/core/index.js";
import { type EstimateOptions, estimateSteps } from "../../src/estimate/estimate-starts.js";
import {
  type AdmissionCandidate,
  type ClusterSummary,
  podPolicyRefusal,
  type ResourceAmount,
} from "../../src/store/index.js";
import { assess, scoreOf, takesJobs } from "./assess.js";
import { type ClusterBase, ClusterView, mergeTopologies } from "./cluster-view.js";
import { decide } from "./decide.js";
import { chunks } from "./chunks.js";
import { matchesSelector } from "./selector.js";

/** A job of the dry run. */
export interface DryRunJob {
  candidate: AdmissionCandidate;
  /** The cluster its input names (admission skips it), else null. */
  named: string | null;
}

export interface DryRunFleet {
  clusters: readonly ClusterSummary[];
  /** Admission's bases of the candidate clusters (ready, not cordoned). */
  bases: ReadonlyMap<string, ClusterBase>;
  /** The jobs waiting for admission now, in admission's order. */
  waiting: readonly AdmissionCandidate[];
  config: SchedulerConfig;
  /** Admission's chunks: jobs, and pods about, per chunk. */
  batch: number;
  batchPods: number;
}

/** One cluster as the dry run saw it for a job. */
export interface DryRunClusterAnswer {
  cluster: string;
  chosen: boolean;
  /** It may take the job (selector, pod policy, ready, not cordoned). */
  candidate: boolean;
  message: string;
  short: ResourceAmount[];
  /** Estimated start (ms); null = not estimated or unknown. */
  estimatedStart: number | null;
  /** Whether the estimator ran for it (the chosen cluster and the best runners-up, in budget). */
  estimated: boolean;
}

export interface DryRunEviction {
  job: string;
  name: string;
  queue: string;
  cluster: string;
  pods: number;
  action: string;
  message: string;
  /** The simulated session's time (ms). */
  at: number;
  /** In the cluster's next cycle (else in a later session, before the job starts). */
  now: boolean;
}

export interface DryRunAnswer {
  job: string;
  cluster: string | null;
  named: boolean;
  /** Admission's tier on the cluster (2 fits now, 1 reclaim makes room); null when named or none. */
  tier: 1 | 2 | null;
  message: string;
  estimatedStart: number | null;
  /** Where the earliest start is, when no cluster is chosen. */
  estimatedCluster: string | null;
  clusters: DryRunClusterAnswer[];
  /** What the cycles of its cluster evict (with the jobs the dry run sends there). */
  evictions: DryRunEviction[];
}

/** Admission's part of the answers (no simulation yet). */
export interface AdmissionPlan {
  answers: DryRunAnswer[];
  /** Per cluster, the jobs the plan sends there (those already waiting included). */
  sent: Map<string, PodGroupSpec[]>;
  /** Per job, the runners-up to estimate, best first. */
  runnersUp: Map<string, string[]>;
  /** The dry run's jobs by uid. */
  specs: Map<string, PodGroupSpec>;
}

/** Admission's order: highest priority first, then oldest, then uid. */
const admissionOrder = (a: AdmissionCandidate, b: AdmissionCandidate) =>
  b.spec.priority - a.spec.priority ||
  a.spec.createdAt - b.spec.createdAt ||
  (a.spec.uid < b.spec.uid ? -1 : a.spec.uid > b.spec.uid ? 1 : 0);

/** Whether the job may go to the cluster at all (what `assess` checks before any dry run). */
function mayTake(summary: ClusterSummary, c: AdmissionCandidate): boolean {
  return (
    takesJobs(summary) &&
    matchesSelector(summary.labels, c.clusterSelector) &&
    podPolicyRefusal(summary.podPolicy, c.podNeeds) === null
  );
}

/** Where admission sends a job, and its words. */
type Decision = { cluster: string; tier: 1 | 2; message: string };

/** What admission's pass decided for the dry run's jobs. */
interface Decided {
  views: Map<string, ClusterView>;
  assigned: Map<string, Decision>;
  reasons: Map<string, Unplaced>;
  /** Per cluster, the jobs sent there (those already waiting included). */
  sent: Map<string, PodGroupSpec[]>;
}

/**
 * Admission's decisions for the jobs, and the answers with their runners-up (at most `runnersUp`
 * per job). A job naming its cluster skips admission and goes there.
 */
export function planAdmission(fleet: DryRunFleet, jobs: readonly DryRunJob[], runnersUp = 2): AdmissionPlan {
  const d = decideAll(
    fleet,
    jobs.filter((j) => j.named === null).map((j) => j.candidate),
  );
  for (const j of jobs)
    if (j.named !== null) d.sent.set(j.named, [...(d.sent.get(j.named) ?? []), j.candidate.spec]);
  const plan: AdmissionPlan = {
    answers: [],
    sent: d.sent,
    runnersUp: new Map(),
    specs: new Map(jobs.map((j) => [j.candidate.spec.uid, j.candidate.spec])),
  };
  for (const j of jobs) {
    const answer =
      j.named !== null
        ? namedAnswer(fleet, j.candidate, j.named)
        : admittedAnswer(fleet, d.views, j.candidate, d.assigned.get(j.candidate.spec.uid), d.reasons);
    plan.answers.push(answer);
    plan.runnersUp.set(
      answer.job,
      answer.clusters
        .filter((c) => c.candidate && !c.chosen)
        .slice(0, runnersUp)
        .map((c) => c.cluster),
    );
  }
  return plan;
}

/**
 * The jobs waiting for admission and the new ones in admission's order and chunks, each chunk
 * decided by `decide` on views that remember the chunks before it, as the next pass would; it
 * stops after the last chunk holding a new job.
 */
function decideAll(fleet: DryRunFleet, fresh: readonly AdmissionCandidate[]): Decided {
  const d: Decided = {
    views: new Map([...fleet.bases].map(([name, base]) => [name, new ClusterView(base)])),
    assigned: new Map(),
    reasons: new Map(),
    sent: new Map(),
  };
  const mine = new Set(fresh.map((c) => c.spec.uid));
  const all = [...fleet.waiting, ...fresh].sort(admissionOrder);
  const byId = new Map(all.map((c) => [c.spec.uid, c]));
  let left = mine.size;
  const list = all.map((c) => ({ id: c.spec.uid, pods: c.spec.pods.length }));
  for (const ids of chunks(list, fleet.batch, fleet.batchPods)) {
    if (!left) break;
    const out = decide(
      ids.map((id) => byId.get(id)!),
      d.views,
      fleet.clusters,
    );
    for (const a of out.assigned) {
      d.assigned.set(a.job, a);
      d.sent.set(a.cluster, [...(d.sent.get(a.cluster) ?? []), byId.get(a.job)!.spec]);
    }
    for (const r of out.reasons) if (mine.has(r.job)) d.reasons.set(r.job, r.reason.clusters);
    left -= ids.filter((id) => mine.has(id)).length;
  }
  return d;
}

/** Admission's reasons, per cluster, for a job it sends nowhere. */
type Unplaced = readonly { cluster: string; message: string; short: ResourceAmount[] }[];

function namedAnswer(fleet: DryRunFleet, c: AdmissionCandidate, named: string): DryRunAnswer {
  const summary = fleet.clusters.find((s) => s.name === named);
  const state = !summary
    ? "unknown"
    : summary.lost
      ? "lost: its agent has been silent past the timeout; nothing starts there until it is back"
      : summary.cordoned
        ? "cordoned (jobs naming it still go there)"
        : "";
  return {
    job: c.spec.uid,
    cluster: named,
    named: true,
    tier: null,
    message: `the job names its cluster: admission skips it${state ? `; the cluster is ${state}` : ""}`,
    estimatedStart: null,
    estimatedCluster: null,
    clusters: [
      {
        cluster: named,
        chosen: true,
        candidate: true,
        message: "named by the job",
        short: [],
        estimatedStart: null,
        estimated: false,
      },
    ],
    evictions: [],
  };
}

/**
 * A new job's answer: the cluster admission sent it to and its words, the other candidates by
 * score (the runners-up first), and every other cluster with admission's reason; a job sent
 * nowhere has admission's reasons, per cluster, the candidates among them by score.
 */
function admittedAnswer(
  fleet: DryRunFleet,
  views: ReadonlyMap<string, ClusterView>,
  c: AdmissionCandidate,
  decision: Decision | undefined,
  reasons: ReadonlyMap<string, Unplaced>,
): DryRunAnswer {
  return {
    job: c.spec.uid,
    cluster: decision?.cluster ?? null,
    named: false,
    tier: decision?.tier ?? null,
    message:
      decision?.message ??
      `no cluster can run the gang now (${fleet.clusters.length} considered); it would wait for admission`,
    estimatedStart: null,
    estimatedCluster: null,
    clusters: clusterRows(fleet, views, c, decision, reasons.get(c.spec.uid)),
    evictions: [],
  };
}

/** Every cluster for the job: the chosen one, the other candidates by score, then the rest. */
function clusterRows(
  fleet: DryRunFleet,
  views: ReadonlyMap<string, ClusterView>,
  c: AdmissionCandidate,
  decision: Decision | undefined,
  unplaced: Unplaced | undefined,
): DryRunClusterAnswer[] {
  const rows = fleet.clusters.map((s) => {
    const view = views.get(s.name);
    const score = view && mayTake(s, c) ? scoreOf(view, c) : null;
    const chosen = decision?.cluster === s.name;
    const why = unplaced?.find((r) => r.cluster === s.name);
    const message = chosen
      ? decision!.message
      : (why?.message ??
        (score !== null ? `may take it too (score ${score})` : assess(s, undefined, c).message));
    const row: DryRunClusterAnswer = {
      cluster: s.name,
      chosen,
      candidate: score !== null,
      message,
      short: why?.short ?? [],
      estimatedStart: null,
      estimated: false,
    };
    return { row, score: chosen ? Number.POSITIVE_INFINITY : (score ?? Number.NEGATIVE_INFINITY) };
  });
  rows.sort((a, b) => b.score - a.score || (a.row.cluster < b.row.cluster ? -1 : 1));
  return rows.map((r) => r.row);
}

/** What the estimator needs besides the snapshots. */
export interface StartInputs {
  config: SchedulerConfig;
  /** Each cluster's snapshot as it is now (the full one, every pod on its node). */
  snapshots: ReadonlyMap<string, Snapshot>;
  /** The new jobs' topologies (to add to a snapshot with them). */
  topologies: ReadonlyMap<string, AdmissionCandidate["topologies"]>;
  estimate: Pick<EstimateOptions, "runtimes" | "queueRuntimeSamplesMs" | "horizonMs" | "maxSessions">;
  /** Asked between sessions: true = stop there (a budget); the first session always runs. */
  stop?: () => boolean;
}

/** One simulated cluster: the targets' starts and what its sessions evicted. */
interface Simulated {
  starts: Map<string, number | null>;
  evictions: DryRunEviction[];
  complete: boolean;
}

/**
 * The starts on the clusters the plan sends jobs to: the estimator there with those jobs added
 * (their starts, the evictions of the first session — the next cycle — and of the later ones
 * before the last of them starts). The runners-up are `planRunnersUp`'s.
 */
export function planStarts(plan: AdmissionPlan, inputs: StartInputs): DryRunAnswer[] {
  const answers = plan.answers.map((a) => ({ ...a, clusters: a.clusters.map((c) => ({ ...c })) }));
  for (const [cluster, specs] of plan.sent) {
    const mine = answers.filter((a) => a.cluster === cluster);
    if (!mine.length) continue;
    const sim = simulate(
      inputs,
      cluster,
      specs,
      mine.map((a) => a.job),
      true,
    );
    if (!sim) continue;
    for (const a of mine) {
      a.estimatedStart = sim.starts.get(a.job) ?? null;
      a.evictions = sim.evictions;
      const row = a.clusters.find((c) => c.chosen)!;
      row.estimatedStart = a.estimatedStart;
      row.estimated = sim.complete || a.estimatedStart !== null;
    }
  }
  return answers;
}

/** The answers with each job's runners-up estimated (the job added there), as far as the budget
 * goes. */
export function planRunnersUp(
  plan: AdmissionPlan,
  answers: readonly DryRunAnswer[],
  inputs: StartInputs,
): DryRunAnswer[] {
  const out = answers.map((a) => ({ ...a, clusters: a.clusters.map((c) => ({ ...c })) }));
  for (const a of out) estimateRunnersUp(a, plan, inputs);
  return out;
}

function estimateRunnersUp(a: DryRunAnswer, plan: AdmissionPlan, inputs: StartInputs): void {
  const spec = plan.specs.get(a.job)!;
  for (const cluster of plan.runnersUp.get(a.job) ?? []) {
    if (inputs.stop?.()) return;
    const sim = simulate(inputs, cluster, [...(plan.sent.get(cluster) ?? []), spec], [a.job], false);
    if (!sim) continue;
    const row = a.clusters.find((c) => c.cluster === cluster)!;
    row.estimatedStart = sim.starts.get(a.job) ?? null;
    row.estimated = sim.complete || row.estimatedStart !== null;
    const earlier =
      a.estimatedStart === null || (row.estimatedStart ?? Number.POSITIVE_INFINITY) < a.estimatedStart;
    if (a.cluster === null && row.estimatedStart !== null && earlier) {
      a.estimatedStart = row.estimatedStart;
      a.estimatedCluster = cluster;
    }
  }
}

/**
 * The estimator on the cluster's snapshot with `jobs` added, for the `targets`' starts, noting
 * every session's evictions until the last target starts. `first`: the first session runs
 * whatever the budget says (the next cycle's evictions are always answered).
 */
function simulate(
  inputs: StartInputs,
  cluster: string,
  jobs: readonly PodGroupSpec[],
  targets: readonly string[],
  first: boolean,
): Simulated | null {
  const snapshot = inputs.snapshots.get(cluster);
  if (!snapshot) return null;
  const added = new Set(jobs.map((j) => j.uid));
  const topologies = mergeTopologies(
    snapshot.topologies,
    ...jobs.map((j) => inputs.topologies.get(j.uid) ?? []),
  );
  const start = snapshot.now;
  const specs = new Map(snapshot.jobs.map((j) => [j.uid, j]));
  const evictions: DryRunEviction[] = [];
  const observe = (at: number, r: SessionResult) =>
    evictions.push(...evictionsOf(cluster, specs, r, at, start));
  const steps = estimateSteps(
    { ...snapshot, jobs: [...snapshot.jobs.filter((j) => !added.has(j.uid)), ...jobs], topologies },
    inputs.config,
    { ...inputs.estimate, jobs: targets, observe },
  );
  let sessions = 0;
  let found = new Map<string, number | null>();
  for (;;) {
    if (sessions > 0 || !first) if (inputs.stop?.()) break;
    const s = steps.next();
    sessions++;
    found = s.value.starts;
    if (s.done || targets.every((t) => found.get(t) != null))
      return { starts: found, evictions, complete: true };
  }
  // Stopped by the budget: the starts found so far hold, the others are unknown.
  return { starts: found, evictions, complete: false };
}

/** A session's evictions by job (pods counted), in the order the session made them. */
function evictionsOf(
  cluster: string,
  specs: ReadonlyMap<string, PodGroupSpec>,
  r: SessionResult,
  at: number,
  start: number,
): DryRunEviction[] {
  const byJob = new Map<string, DryRunEviction>();
  for (const e of r.evictions) {
    const seen = byJob.get(e.job);
    if (seen) {
      seen.pods++;
      continue;
    }
    const spec = specs.get(e.job);
    byJob.set(e.job, {
      job: e.job,
      name: spec?.name ?? e.job,
      queue: spec?.queue ?? "",
      cluster,
      pods: 1,
      action: e.action,
      message: e.message,
      at,
      now: at === start,
    });
  }
  return [...byJob.values()];
}
