// One admission pass: every PENDING job without a cluster gets the best cluster for it (assess.ts)
// or stays unadmitted with the reason, per cluster, why none fits; a job that has waited long and
// entirely unplaced on its cluster moves to another where it fits now. Jobs are decided one at a
// time (highest priority, then oldest, first) against views that remember what the pass already
// sent where; the decisions are then persisted, each kind in one transaction.
import type { Logger } from "pino";
import type { SchedulerConfig } from "../../src/core/index.js";
import {
  type AdmissionCandidate,
  admissionCandidatesByIds,
  admissionClusters,
  assignJobClusters,
  type ClusterSummary,
  type PendingReason,
  podPolicyRefusal,
  readmissionCandidates,
  reassignJobCluster,
  setJobPendingReasons,
  type Store,
  type UnadmittedJob,
  type UsageWindow,
  unadmittedJobs,
} from "../../src/store/index.js";
import { admissionDecisionsTotal, admissionDuration } from "../metrics.js";
import { gangMinimum, jobTotal, within } from "./amounts.js";
import { type Assessment, assess, byPreference, fitsNowAssessment, scoreOf, takesJobs } from "./assess.js";
import { ClusterView } from "./cluster-view.js";
import { AdmissionState, fullReads } from "./state.js";
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
  /** What the worker keeps between passes; absent = a pass that starts from nothing. */
  state?: AdmissionState;
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
  /** Nothing to decide: no job not looked at yet, no cluster change that can make room. */
  skipped?: boolean;
  /** How long bringing the clusters' bases up to date took (their digests), ms. */
  basesMs?: number;
}

const ADMISSION = { name: "admission" };
/** Dry-run rounds per chunk: each places what fits now; few are ever needed. */
const MAX_ROUNDS = 5;
/** Rounds of offers per chunk (offerRounds) before the full rounds. */
const MAX_OFFER_ROUNDS = 5;

/**
 * A pass goes through the unadmitted jobs it has not decided yet (every one after a cluster
 * change that can make room), in chunks (a page of jobs, cut at about `batchPods` pods): each
 * chunk is decided and committed before the next is read, so the first decisions reach the cycles
 * early and a head of jobs that fit nowhere never hides the ones behind it.
 */
export async function runAdmission(deps: AdmissionDeps): Promise<AdmissionReport> {
  const end = admissionDuration.startTimer();
  const now = new Date();
  const state = deps.state ?? new AdmissionState(fullReads(deps.store));
  const report: AdmissionReport = { considered: 0, assigned: [], reassigned: [], unplaced: 0, clusters: [] };
  const skipped = () => {
    end();
    return { ...report, skipped: true };
  };
  const [found, clusters] = await Promise.all([lookForJobs(deps, state, now), admissionClusters(deps.store)]);
  if (!found.jobs.length && !found.readmit.length) return skipped();
  // The first chunk is read while the clusters are brought up to date: the same chunk unless the
  // refresh brings back jobs held as unplaced.
  const early = chunks(
    found.jobs.filter((j) => !state.unplaced.has(j.id)),
    deps.batch,
    deps.batchPods,
  ).next().value;
  const prefetched = early ? admissionCandidatesByIds(deps.store, early) : undefined;
  prefetched?.catch(() => {}); // a failed read is seen where it is used; unused, it is dropped
  const refreshing = performance.now();
  await state.refresh(clusters, deps.config, { now: now.getTime(), usage: deps.usageWindow ?? undefined });
  report.basesMs = Math.round(performance.now() - refreshing);
  // After a cluster change that can make room, every job is looked at again.
  const todo = found.jobs.filter((j) => !state.unplaced.has(j.id));
  const waiting = found.readmit.filter((c) => !state.unplaced.has(c.spec.uid));
  if (!todo.length && !waiting.length) return skipped();
  const views = new Map([...state.bases].map(([name, base]) => [name, new ClusterView(base)]));
  let first = true;
  for (const ids of chunks(todo, deps.batch, deps.batchPods)) {
    const read =
      first && prefetched && sameList(ids, early!) ? prefetched : admissionCandidatesByIds(deps.store, ids);
    // Re-admission candidates come with the first chunk only.
    const chunk = [...(await read), ...(first ? waiting : [])];
    first = false;
    if (!chunk.length) continue;
    const decided = await decideChunk(deps, clusters, views, chunk);
    report.considered += chunk.length;
    report.assigned.push(...decided.assigned);
    report.reassigned.push(...decided.reassigned);
    report.unplaced += decided.unplaced;
    for (const job of decided.unplacedJobs) state.unplaced.add(job);
    if (decided.clusters.length) await deps.onAssigned?.(decided.clusters);
  }
  if (first && waiting.length) {
    const decided = await decideChunk(deps, clusters, views, waiting);
    report.considered += waiting.length;
    report.reassigned.push(...decided.reassigned);
    for (const job of decided.unplacedJobs) state.unplaced.add(job);
    if (decided.clusters.length) await deps.onAssigned?.(decided.clusters);
  }
  report.clusters = [...new Set([...report.assigned, ...report.reassigned].map((d) => d.cluster))].sort();
  const seconds = end();
  if (report.assigned.length || report.reassigned.length || report.unplaced)
    deps.log.info(
      {
        considered: report.considered,
        assigned: report.assigned.length,
        reassigned: report.reassigned.length,
        unplaced: report.unplaced,
        ms: Math.round(seconds * 1000),
        basesMs: report.basesMs,
      },
      "admission pass",
    );
  return report;
}

/**
 * Every unadmitted job (and re-admission candidate). When a job the state holds as unplaced has
 * gone (admitted elsewhere, cancelled), every job is looked at again: the jobs behind it meet
 * less competition.
 */
async function lookForJobs(
  deps: AdmissionDeps,
  state: AdmissionState,
  now: Date,
): Promise<{ jobs: UnadmittedJob[]; readmit: AdmissionCandidate[] }> {
  const [jobs, readmit] = await Promise.all([
    unadmittedJobs(deps.store),
    deps.readmitAfterMs > 0
      ? readmissionCandidates(deps.store, { afterMs: deps.readmitAfterMs, now, limit: deps.batch })
      : [],
  ]);
  const present = new Set([...jobs.map((j) => j.id), ...readmit.map((c) => c.spec.uid)]);
  for (const id of state.unplaced)
    if (!present.has(id)) {
      state.unplaced.clear();
      break;
    }
  return { jobs, readmit };
}

const sameList = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((x, i) => x === b[i]);

/** Ids in chunks of at most `jobs` jobs and about `pods` pods (always at least one job). */
function* chunks(list: readonly UnadmittedJob[], jobs: number, pods: number): Generator<string[]> {
  let chunk: string[] = [];
  let total = 0;
  for (const j of list) {
    if (chunk.length && (chunk.length >= jobs || total + j.pods > pods)) {
      yield chunk;
      chunk = [];
      total = 0;
    }
    chunk.push(j.id);
    total += j.pods;
  }
  if (chunk.length) yield chunk;
}

/** Decides one chunk against the views (which keep what earlier chunks placed) and commits it. */
async function decideChunk(
  deps: AdmissionDeps,
  clusters: readonly ClusterSummary[],
  views: Map<string, ClusterView>,
  candidates: readonly AdmissionCandidate[],
): Promise<AdmissionReport & { unplacedJobs: string[] }> {
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
  // Offer rounds come first and place most of a backlog at a fraction of the cost; the full
  // rounds then look at every job left on every cluster, so a job is only ever found to fit
  // nowhere by dry runs that had it on every cluster it may go to.
  // One job alone needs no round: clusters are tried best score first, the first where it fits wins.
  let undecided = candidates;
  const one = candidates.length === 1 ? candidates[0]! : null;
  const alone = one ? bestNowAlone(clusters, views, one) : undefined;
  if (one && alone) {
    admit(one, alone);
    undecided = [];
  }
  if (!one) undecided = offerRounds(clusters, views, undecided, admit);
  for (let round = 0; round < MAX_ROUNDS && undecided.length && !one; round++) {
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
  const unplacedJobs: string[] = [];
  for (const c of undecided) {
    if (c.cluster !== null) {
      unplacedJobs.push(c.spec.uid); // re-admission only moves jobs that fit now
      continue;
    }
    const ranked = clusters.map((s) => assess(s, views.get(s.name), c)).sort(byPreference);
    const best = ranked[0];
    if (best && best.tier > 0) admit(c, best);
    else {
      reasons.push({ job: c.spec.uid, reason: unplacedReason(ranked) });
      unplacedJobs.push(c.spec.uid);
    }
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
  return { ...report, unplacedJobs };
}

/** Whether the job may go to the view's cluster (its selector, the cluster's pod policy; not the
 * cluster it waits on). */
const mayGo = (view: ClusterView, c: AdmissionCandidate) =>
  c.cluster !== view.name &&
  matchesSelector(view.labels, c.clusterSelector) &&
  podPolicyRefusal(view.base.podPolicy, c.podNeeds) === null;

/** Each view's dry run with the candidates that may go there. */
function evaluate(views: Map<string, ClusterView>, candidates: readonly AdmissionCandidate[]): void {
  for (const view of views.values()) view.evaluate(candidates.filter((c) => mayGo(view, c)));
}

/**
 * Offer rounds: each job in turn is offered to the best-scoring cluster whose free room (in sum
 * over its nodes, less what the round offered there before) holds its gang's minimum — the score
 * counting what was offered like what was placed — and each cluster then has one dry run with the
 * jobs offered to it. Those it places fit now, all together with the others offered there, and
 * go there, in the order of the jobs up to the first one refused; the rest are offered again in
 * the next round, a refused job never again where it was refused. So each job goes to the
 * best-scoring cluster where it fits once the jobs before it are sent, and a cluster's dry run
 * holds about what its room takes instead of every job of the chunk. Returns the jobs left.
 */
function offerRounds(
  clusters: readonly ClusterSummary[],
  views: Map<string, ClusterView>,
  candidates: readonly AdmissionCandidate[],
  admit: (c: AdmissionCandidate, best: Assessment) => void,
): readonly AdmissionCandidate[] {
  const refused = new Map<string, Set<string>>();
  const open = clusters.filter(takesJobs).flatMap((summary) => {
    const view = views.get(summary.name);
    return view ? [{ summary, view }] : [];
  });
  let undecided = candidates;
  for (let round = 0; round < MAX_OFFER_ROUNDS && undecided.length; round++) {
    for (const { view } of open) view.evaluateShares(undecided.filter((c) => mayGo(view, c)));
    const offers = new Map<ClusterView, AdmissionCandidate[]>();
    const chosen = new Map<string, Assessment>();
    for (const c of undecided) {
      const need = gangMinimum(c.spec);
      const no = refused.get(c.spec.uid) ?? new Set<string>();
      refused.set(c.spec.uid, no);
      let best: Assessment | undefined;
      let where: ClusterView | undefined;
      // A job that can never fit a cluster is not offered there (it would hold up the jobs after it).
      while (!best) {
        for (const { summary, view } of open) {
          if (no.has(view.name) || !mayGo(view, c) || !within(need, view.unclaimed)) continue;
          const a = fitsNowAssessment(summary, view, c);
          if (!best || byPreference(a, best) < 0) {
            best = a;
            where = view;
          }
        }
        if (!best || !where || where.mayFitEmpty(c)) break;
        no.add(where.name);
        best = where = undefined;
      }
      if (!best || !where) continue;
      where.offer(c, jobTotal(c.spec));
      chosen.set(c.spec.uid, best);
      const list = offers.get(where);
      if (list) list.push(c);
      else offers.set(where, [c]);
    }
    if (!offers.size) break;
    for (const [view, list] of offers) {
      view.withdrawOffers();
      view.evaluate(list, { shares: false });
    }
    const placed = new Set<string>();
    let refusals = 0;
    for (const [view, list] of offers)
      for (const c of list) {
        if (view.fitsNow(c.spec.uid).fits) {
          placed.add(c.spec.uid);
          continue;
        }
        refused.get(c.spec.uid)!.add(view.name);
        refusals++;
      }
    // In the order of the jobs, up to the first refused: the jobs after it were scored with it
    // counted where it does not fit, and are offered again.
    const sent = new Set<string>();
    for (const c of undecided) {
      const at = chosen.get(c.spec.uid);
      if (!at) continue;
      if (!placed.has(c.spec.uid)) break;
      admit(c, at);
      sent.add(c.spec.uid);
    }
    if (!sent.size && !refusals) break;
    undecided = undecided.filter((c) => !sent.has(c.spec.uid));
  }
  return undecided;
}

/**
 * The best cluster where one job fits now, dry-running clusters in the order of their score (which
 * does not depend on the fit) and stopping at the first where it fits: what bestNow would choose.
 * When it fits nowhere, every cluster it may go to has been evaluated with it.
 */
function bestNowAlone(
  clusters: readonly ClusterSummary[],
  views: Map<string, ClusterView>,
  c: AdmissionCandidate,
): Assessment | undefined {
  const ranked: { summary: ClusterSummary; view: ClusterView; score: number }[] = [];
  for (const summary of clusters) {
    const view = views.get(summary.name);
    if (!view) continue;
    if (!mayGo(view, c)) {
      view.evaluate([]);
      continue;
    }
    view.evaluateShares([c]);
    ranked.push({ summary, view, score: scoreOf(view, c) });
  }
  ranked.sort((a, b) => b.score - a.score || (a.summary.name < b.summary.name ? -1 : 1));
  for (const { summary, view } of ranked) {
    view.evaluate([c], { shares: false });
    if (view.fitsNow(c.spec.uid).fits) return assess(summary, view, c);
  }
  return undefined;
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
