// Which cluster each job of a chunk goes to, against views that remember what the pass already
// sent where. No I/O: it reads the views, runs their dry runs and records its decisions in them;
// writing the decisions and counting them is the caller's (run-admission.ts).
//   one job      clusters dry-run best score first, the first where it fits wins;
//   several      offer rounds place most of them cheaply, full rounds then try every job left on
//                every cluster;
//   what is left new jobs may go where reclaim will make room (tier 1), else stay unplaced.
import {
  type AdmissionCandidate,
  type ClusterSummary,
  type PendingReason,
  podPolicyRefusal,
} from "../../src/store/index.js";
import { type Amounts, gangMinimum, jobTotal, within } from "./amounts.js";
import { type Assessment, assess, byPreference, fitsNowAssessment, scoreOf, takesJobs } from "./assess.js";
import type { ClusterView } from "./cluster-view.js";
import { matchesSelector } from "./selector.js";

export interface AdmissionDecision {
  job: string;
  cluster: string;
  tier: 1 | 2;
  message: string;
}

export interface Decisions {
  /** Jobs without a cluster sent to one, in the order decided. */
  assigned: AdmissionDecision[];
  /** Jobs that waited unplaced moved to a cluster where they fit now. */
  reassigned: (AdmissionDecision & { from: string })[];
  /** New jobs sent nowhere, and why (their pending reason). */
  reasons: { job: string; reason: PendingReason }[];
  /** Every job sent nowhere, re-admission candidates included. */
  unplaced: string[];
}

/** Dry-run rounds per chunk: each places what fits now; few are ever needed. */
const MAX_ROUNDS = 5;
/** Rounds of offers per chunk (offerRounds) before the full rounds. */
const MAX_OFFER_ROUNDS = 5;

type Send = (c: AdmissionCandidate, best: Assessment) => void;

/** Decides one chunk against the views (which keep what earlier chunks sent, and get this one's). */
export function decide(
  candidates: readonly AdmissionCandidate[],
  views: ReadonlyMap<string, ClusterView>,
  clusters: readonly ClusterSummary[],
): Decisions {
  const out: Decisions = { assigned: [], reassigned: [], reasons: [], unplaced: [] };
  const send: Send = (c, best) => {
    const decision = {
      job: c.spec.uid,
      cluster: best.cluster,
      tier: best.tier as 1 | 2,
      message: best.message,
    };
    views.get(best.cluster)!.admit(c, jobTotal(c.spec), best.tier === 2);
    if (c.cluster === null) out.assigned.push(decision);
    else out.reassigned.push({ ...decision, from: c.cluster });
  };
  const left =
    candidates.length === 1
      ? decideAlone(clusters, views, candidates[0]!, send)
      : fullRounds(clusters, views, offerRounds(clusters, views, candidates, send), send);
  decideTheRest(clusters, views, left, send, out);
  return out;
}

/** Whether the job may go to the view's cluster (its selector, the cluster's pod policy; not the
 * cluster it waits on). */
const mayGo = (view: ClusterView, c: AdmissionCandidate) =>
  c.cluster !== view.name &&
  matchesSelector(view.labels, c.clusterSelector) &&
  podPolicyRefusal(view.base.podPolicy, c.podNeeds) === null;

/**
 * One job alone: dry-runs clusters in the order of their score (which does not depend on the fit)
 * and stops at the first where it fits, what the full rounds would choose. When it fits nowhere,
 * every cluster it may go to has been evaluated with it. Returns the job if it is left.
 */
function decideAlone(
  clusters: readonly ClusterSummary[],
  views: ReadonlyMap<string, ClusterView>,
  c: AdmissionCandidate,
  send: Send,
): AdmissionCandidate[] {
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
    if (view.fitsNow(c.spec.uid).fits) {
      send(c, assess(summary, view, c));
      return [];
    }
  }
  return [c];
}

/**
 * Full rounds: evaluate the undecided jobs on every cluster, send those that fit now where they
 * fit best; what a round placed stays placed in the views, so the next round sees the room left.
 * A job is only ever found to fit nowhere by dry runs that had it on every cluster it may go to.
 * Returns the jobs left.
 */
function fullRounds(
  clusters: readonly ClusterSummary[],
  views: ReadonlyMap<string, ClusterView>,
  candidates: readonly AdmissionCandidate[],
  send: Send,
): readonly AdmissionCandidate[] {
  let undecided = candidates;
  for (let round = 0; round < MAX_ROUNDS && undecided.length; round++) {
    for (const view of views.values()) view.evaluate(undecided.filter((c) => mayGo(view, c)));
    const before = undecided.length;
    undecided = undecided.filter((c) => {
      const best = bestNow(clusters, views, c);
      if (best) send(c, best);
      return !best;
    });
    if (undecided.length === before) break;
  }
  return undecided;
}

/** The best cluster where the job fits now, if any (never the one a re-admission candidate waits on). */
function bestNow(
  clusters: readonly ClusterSummary[],
  views: ReadonlyMap<string, ClusterView>,
  c: AdmissionCandidate,
): Assessment | undefined {
  return clusters
    .filter((s) => s.name !== c.cluster && views.get(s.name)?.fitsNow(c.spec.uid).fits)
    .map((s) => assess(s, views.get(s.name), c))
    .sort(byPreference)[0];
}

/** The jobs that fit nowhere now: new ones may still go where reclaim will make room (tier 1);
 * re-admission only moves jobs that fit now. */
function decideTheRest(
  clusters: readonly ClusterSummary[],
  views: ReadonlyMap<string, ClusterView>,
  left: readonly AdmissionCandidate[],
  send: Send,
  out: Decisions,
): void {
  for (const c of left) {
    if (c.cluster !== null) {
      out.unplaced.push(c.spec.uid);
      continue;
    }
    const ranked = clusters.map((s) => assess(s, views.get(s.name), c)).sort(byPreference);
    const best = ranked[0];
    if (best && best.tier > 0) send(c, best);
    else {
      out.reasons.push({ job: c.spec.uid, reason: unplacedReason(ranked) });
      out.unplaced.push(c.spec.uid);
    }
  }
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

interface OpenCluster {
  summary: ClusterSummary;
  view: ClusterView;
}

interface Offer {
  view: ClusterView;
  assessment: Assessment;
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
  views: ReadonlyMap<string, ClusterView>,
  candidates: readonly AdmissionCandidate[],
  send: Send,
): readonly AdmissionCandidate[] {
  /** Per job, the clusters whose dry run refused it (or that can never hold it). */
  const refused = new Map<string, Set<string>>();
  const open = clusters.filter(takesJobs).flatMap((summary): OpenCluster[] => {
    const view = views.get(summary.name);
    return view ? [{ summary, view }] : [];
  });
  let undecided = candidates;
  for (let round = 0; round < MAX_OFFER_ROUNDS && undecided.length; round++) {
    for (const { view } of open) view.evaluateShares(undecided.filter((c) => mayGo(view, c)));
    const offers = makeOffers(open, undecided, refused);
    if (!offers.size) break;
    const { placed, refusals } = dryRunOffers(offers, refused);
    // In the order of the jobs, up to the first refused: the jobs after it were scored with it
    // counted where it does not fit, and are offered again.
    const sent = new Set<string>();
    for (const c of undecided) {
      const offer = offers.get(c);
      if (!offer) continue;
      if (!placed.has(c.spec.uid)) break;
      send(c, offer.assessment);
      sent.add(c.spec.uid);
    }
    if (!sent.size && !refusals) break;
    undecided = undecided.filter((c) => !sent.has(c.spec.uid));
  }
  return undecided;
}

/** Offers each job, in order, to its best open cluster; each offer counts on that view. */
function makeOffers(
  open: readonly OpenCluster[],
  undecided: readonly AdmissionCandidate[],
  refused: Map<string, Set<string>>,
): Map<AdmissionCandidate, Offer> {
  const offers = new Map<AdmissionCandidate, Offer>();
  for (const c of undecided) {
    const no = refused.get(c.spec.uid) ?? new Set<string>();
    refused.set(c.spec.uid, no);
    const offer = bestOffer(open, c, gangMinimum(c.spec), no);
    if (!offer) continue;
    offer.view.offer(c, jobTotal(c.spec));
    offers.set(c, offer);
  }
  return offers;
}

/** The best-scoring open cluster whose room holds `need` and whose nodes may hold the gang. A
 * job that can never fit a cluster is not offered there (it would hold up the jobs after it). */
function bestOffer(
  open: readonly OpenCluster[],
  c: AdmissionCandidate,
  need: Amounts,
  no: Set<string>,
): Offer | undefined {
  for (;;) {
    let best: Assessment | undefined;
    let where: ClusterView | undefined;
    for (const { summary, view } of open) {
      if (no.has(view.name) || !mayGo(view, c) || !within(need, view.unclaimed)) continue;
      const a = fitsNowAssessment(summary, view, c);
      if (!best || byPreference(a, best) < 0) {
        best = a;
        where = view;
      }
    }
    if (!best || !where) return undefined;
    if (where.mayFitEmpty(c)) return { view: where, assessment: best };
    no.add(where.name);
  }
}

/** One dry run per cluster with the jobs offered to it: the jobs it placed, and how many it
 * refused (each refusal recorded in `refused`). */
function dryRunOffers(
  offers: ReadonlyMap<AdmissionCandidate, Offer>,
  refused: Map<string, Set<string>>,
): { placed: Set<string>; refusals: number } {
  const byView = new Map<ClusterView, AdmissionCandidate[]>();
  for (const [c, { view }] of offers) {
    const list = byView.get(view);
    if (list) list.push(c);
    else byView.set(view, [c]);
  }
  for (const [view, list] of byView) {
    view.withdrawOffers();
    view.evaluate(list, { shares: false });
  }
  const placed = new Set<string>();
  let refusals = 0;
  for (const [view, list] of byView)
    for (const c of list) {
      if (view.fitsNow(c.spec.uid).fits) {
        placed.add(c.spec.uid);
        continue;
      }
      refused.get(c.spec.uid)!.add(view.name);
      refusals++;
    }
  return { placed, refusals };
}
