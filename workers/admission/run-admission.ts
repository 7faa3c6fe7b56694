// One admission pass: every PENDING job without a cluster gets the best cluster for it (assess.ts)
// or stays unadmitted with the reason, per cluster, why none fits; a job that has waited long and
// entirely unplaced on its cluster moves to another where it fits now. Jobs are decided one at a
// time (highest priority, then oldest, first) against views that remember what the pass already
// sent where; the decisions are then persisted, each kind in one transaction.
import type { Logger } from "pino";
import type { SchedulerConfig } from "../../src/core/index.js";
import {
  type AdmissionCandidate,
  type AdmissionCursor,
  admissionCandidates,
  assignJobClusters,
  type ClusterSummary,
  cursorOf,
  listClusters,
  loadSnapshot,
  type PendingReason,
  reassignJobCluster,
  setJobPendingReasons,
  type Store,
  type UsageWindow,
} from "../../src/store/index.js";
import { admissionDecisionsTotal, admissionDuration } from "../metrics.js";
import { jobTotal } from "./amounts.js";
import { type Assessment, assess, byPreference } from "./assess.js";
import { ClusterView } from "./cluster-view.js";
import { matchesSelector } from "./selector.js";

export interface AdmissionDeps {
  store: Store;
  config: SchedulerConfig;
  usageWindow: UsageWindow | null;
  /** 0 = no re-admission. */
  readmitAfterMs: number;
  /** Jobs per chunk. */
  batch: number;
  /** Pods per chunk, about (the jobs that fit under it, at least one). */
  batchPods: number;
  /** Called after each chunk's decisions are committed, with the clusters that got jobs. */
  onAssigned?: (clusters: string[]) => Promise<void>;
  log: Logger;
}

export interface AdmissionDecision {
  job: string;
  cluster: string;
  tier: 1 | 2;
  message: string;
}

export interface AdmissionReport {
  considered: number;
  assigned: AdmissionDecision[];
  reassigned: (AdmissionDecision & { from: string })[];
  unplaced: number;
  /** Clusters that got jobs: their cycles should run. */
  clusters: string[];
}

const ADMISSION = { name: "admission" };
/** Dry-run rounds per chunk: each places what fits now; few are ever needed. */
const MAX_ROUNDS = 5;

/**
 * A pass goes through every unadmitted job, in chunks (a page of jobs, cut at about `batchPods`
 * pods): each chunk is decided and committed before the next is read, so the first decisions
 * reach the cycles early and a head of jobs that fit nowhere never hides the ones behind it.
 */
export async function runAdmission(deps: AdmissionDeps): Promise<AdmissionReport> {
  const end = admissionDuration.startTimer();
  const now = new Date();
  const report: AdmissionReport = { considered: 0, assigned: [], reassigned: [], unplaced: 0, clusters: [] };
  let views: Map<string, ClusterView> | null = null;
  let clusters: ClusterSummary[] = [];
  let after: AdmissionCursor | null = null;
  for (let first = true; ; first = false) {
    const page = await admissionCandidates(deps.store.prisma, {
      limit: deps.batch,
      after,
      // Re-admission candidates come with the first page only.
      readmitAfterMs: first && deps.readmitAfterMs > 0 ? deps.readmitAfterMs : undefined,
      now,
    });
    const chunk = withinPods(page, deps.batchPods);
    if (!chunk.length) break;
    if (!views) {
      clusters = await listClusters(deps.store.prisma);
      views = await loadViews(deps, clusters, now);
    }
    const decided = await decideChunk(deps, clusters, views, chunk);
    report.considered += chunk.length;
    report.assigned.push(...decided.assigned);
    report.reassigned.push(...decided.reassigned);
    report.unplaced += decided.unplaced;
    if (decided.clusters.length) await deps.onAssigned?.(decided.clusters);
    const lastNew = chunk.filter((c) => c.cluster === null).at(-1);
    const more = chunk.length < page.length || page.filter((c) => c.cluster === null).length >= deps.batch;
    if (!lastNew || !more) break;
    after = cursorOf(lastNew);
  }
  report.clusters = [...new Set([...report.assigned, ...report.reassigned].map((d) => d.cluster))].sort();
  end();
  if (report.assigned.length || report.reassigned.length || report.unplaced)
    deps.log.info(
      { assigned: report.assigned.length, reassigned: report.reassigned.length, unplaced: report.unplaced },
      "admission pass",
    );
  return report;
}

/** Decides one chunk against the views (which keep what earlier chunks placed) and commits it. */
async function decideChunk(
  deps: AdmissionDeps,
  clusters: readonly ClusterSummary[],
  views: Map<string, ClusterView>,
  candidates: readonly AdmissionCandidate[],
): Promise<AdmissionReport> {
  const report: AdmissionReport = {
    considered: candidates.length,
    assigned: [],
    reassigned: [],
    unplaced: 0,
    clusters: [],
  };
  const reasons: { job: string; reason: PendingReason }[] = [];
  const admit = (c: AdmissionCandidate, best: Assessment) => {
    const decision = {
      job: c.spec.uid,
      cluster: best.cluster,
      tier: best.tier as 1 | 2,
      message: best.message,
    };
    views.get(best.cluster)!.admit(c, jobTotal(c.spec), best.tier === 2);
    if (c.cluster === null) report.assigned.push(decision);
    else report.reassigned.push({ ...decision, from: c.cluster });
  };

  // Rounds: evaluate the undecided jobs on every cluster, send those that fit now where they fit
  // best; what the round placed stays placed in the views, so the next round sees the room left.
  let undecided = candidates;
  for (let round = 0; round < MAX_ROUNDS && undecided.length; round++) {
    evaluate(views, undecided);
    const before = undecided.length;
    undecided = undecided.filter((c) => {
      const best = bestNow(clusters, views, c);
      if (best) admit(c, best);
      return !best;
    });
    if (undecided.length === before) break;
  }
  // The rest fit nowhere now: new jobs may still go where reclaim will make room (tier 1).
  for (const c of undecided) {
    if (c.cluster !== null) continue; // re-admission only moves jobs that fit now
    const ranked = clusters.map((s) => assess(s, views.get(s.name), c)).sort(byPreference);
    const best = ranked[0];
    if (best && best.tier > 0) admit(c, best);
    else reasons.push({ job: c.spec.uid, reason: unplacedReason(ranked) });
  }

  const assigned = await assignJobClusters(
    deps.store,
    ADMISSION,
    report.assigned.map((d) => ({ job: d.job, cluster: d.cluster, message: d.message })),
  );
  const landed = new Set(assigned);
  report.assigned = report.assigned.filter((d) => landed.has(d.job));
  const moved: AdmissionReport["reassigned"] = [];
  for (const d of report.reassigned) {
    const message = `waited ${Math.round(deps.readmitAfterMs / 1000)} s or more unplaced; ${d.message}`;
    if (await reassignJobCluster(deps.store, ADMISSION, { job: d.job, from: d.from, to: d.cluster, message }))
      moved.push(d);
  }
  report.reassigned = moved;
  await setJobPendingReasons(deps.store, ADMISSION, reasons);
  report.unplaced = reasons.length;
  report.clusters = [...new Set([...report.assigned, ...report.reassigned].map((d) => d.cluster))].sort();

  for (const d of report.assigned) admissionDecisionsTotal.inc({ outcome: "assigned", cluster: d.cluster });
  for (const d of report.reassigned)
    admissionDecisionsTotal.inc({ outcome: "reassigned", cluster: d.cluster });
  admissionDecisionsTotal.inc({ outcome: "unplaced", cluster: "" }, reasons.length);
  return report;
}

/** The first candidates whose pods add up to at most `pods` (always the first one). */
function withinPods(candidates: readonly AdmissionCandidate[], pods: number): AdmissionCandidate[] {
  let total = 0;
  const out: AdmissionCandidate[] = [];
  for (const c of candidates) {
    total += c.spec.pods.length;
    if (out.length && total > pods) break;
    out.push(c);
  }
  return out;
}

/** Snapshots of the ready, uncordoned clusters. */
async function loadViews(
  deps: AdmissionDeps,
  clusters: readonly ClusterSummary[],
  now: Date,
): Promise<Map<string, ClusterView>> {
  const views = new Map<string, ClusterView>();
  for (const s of clusters) {
    if (!s.ready || s.cordoned) continue;
    const { snapshot } = await loadSnapshot(deps.store.prisma, s.name, {
      now: now.getTime(),
      usage: deps.usageWindow ?? undefined,
    });
    views.set(s.name, new ClusterView(s, snapshot, deps.config));
  }
  return views;
}

/** Each view's dry run with the candidates that may go there (selector; not the one they wait on). */
function evaluate(views: Map<string, ClusterView>, candidates: readonly AdmissionCandidate[]): void {
  for (const view of views.values())
    view.evaluate(
      candidates.filter((c) => c.cluster !== view.name && matchesSelector(view.labels, c.clusterSelector)),
    );
}

/** The best cluster where the job fits now, if any (never the one a re-admission candidate waits on). */
function bestNow(
  clusters: readonly ClusterSummary[],
  views: Map<string, ClusterView>,
  c: AdmissionCandidate,
): Assessment | undefined {
  return clusters
    .filter((s) => s.name !== c.cluster && views.get(s.name)?.fitsNow(c.spec.uid).fits)
    .map((s) => assess(s, views.get(s.name), c))
    .sort(byPreference)[0];
}

function unplacedReason(ranked: readonly Assessment[]): PendingReason {
  const clusters = [...ranked]
    .sort((a, b) => (a.cluster < b.cluster ? -1 : 1))
    .map((a) => ({ cluster: a.cluster, message: a.message, short: a.short }));
  return {
    message: clusters.length
      ? `no cluster can run the gang now (${clusters.length} considered)`
      : "no cluster is registered yet",
    clusters,
  };
}
