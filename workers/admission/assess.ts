// How good a cluster is for a job (docs/admission.md): a tier, then a score inside the tier, then
// the cluster's name — a total order, so the same state always gives the same decision.
//   tier 2  the whole gang fits on the cluster's free resources now (allocate dry run);
//   tier 1  it does not fit now, but it fits the cluster's nodes when empty and the queue stays
//           within its fair share there: the cluster's reclaim action will make room;
//   tier 0  not a candidate now (the reason names what is short).
//   score   (queue's fair-share headroom + free capacity net of what waits there, both after the
//           job and as fractions of the cluster's capacity) in the job's dominant resource
//           (GPUs when it asks for any, else CPU).
import {
  type AdmissionCandidate,
  type ClusterSummary,
  podPolicyRefusal,
  type ResourceAmount,
  shortAmounts,
} from "../../src/store/index.js";
import { type Amounts, dominantResource, gangMinimum, jobTotal, positive, sub } from "./amounts.js";
import type { ClusterView } from "./cluster-view.js";
import { describeSelector, matchesSelector } from "./selector.js";

export type Tier = 0 | 1 | 2;

export interface Assessment {
  cluster: string;
  tier: Tier;
  score: number;
  message: string;
  short: ResourceAmount[];
}

const round = (x: number) => Math.round(x * 1e6) / 1e6;
const fmt = (r: "gpu" | "cpuMillis", x: number) =>
  r === "gpu" ? `${round(x)} GPU` : `${Math.round(x)}m CPU`;

export function assess(
  summary: ClusterSummary,
  view: ClusterView | undefined,
  c: AdmissionCandidate,
): Assessment {
  const at = (tier: Tier, message: string, short: Amounts | null = null, score = 0): Assessment => ({
    cluster: summary.name,
    tier,
    score,
    message,
    short: shortAmounts(short),
  });
  if (!matchesSelector(summary.labels, c.clusterSelector))
    return at(0, `labels do not match the job's clusterSelector (${describeSelector(c.clusterSelector)})`);
  const refused = podPolicyRefusal(summary.podPolicy, c.podNeeds);
  if (refused) return at(0, refused);
  if (summary.lost) return at(0, "lost: its agent has been silent past the timeout");
  if (!summary.ready) return at(0, "not ready: its agent has reported no node inventory yet");
  if (summary.cordoned) return at(0, "cordoned: takes no new jobs");
  if (!view) return at(0, "not evaluated");

  const total = jobTotal(c.spec);
  const minimum = gangMinimum(c.spec);
  const r = dominantResource(total);
  const headroom = view.headroom(c.spec.queue);
  const headroomAfter = headroom ? headroom[r] - total[r] : -total[r];
  const score = scoreOf(view, c);

  const now = view.fitsNow(c.spec.uid);
  if (now.fits) return at(2, `the gang fits now (score ${score})`, null, score);
  const empty = view.fitsEmpty(c);
  if (!empty.fits)
    return at(
      0,
      `the gang can never fit here: ${empty.fitErrors.join("; ") || "no node arrangement holds it"}`,
      positive(sub(minimum, view.capacity)),
    );
  const busy = now.fitErrors[0] ?? "not enough free resources on its nodes";
  if (headroomAfter >= 0 && c.cluster === null)
    return at(
      1,
      `busy (${busy}), but the queue is within its fair share: reclaim makes room (score ${score})`,
      null,
      score,
    );
  return at(
    0,
    `busy: ${busy}; queue ${c.spec.queue} would exceed its fair share here ` +
      `(${fmt(r, headroom ? headroom[r] : 0)} of headroom for ${fmt(r, total[r])})`,
    positive(sub(minimum, view.unheld)),
  );
}

/** What `assess` says of a job once the view's dry run placed it (tier 2), without asking the view
 * for the fit: for a job offered to the cluster before its dry run. */
export function fitsNowAssessment(
  summary: ClusterSummary,
  view: ClusterView,
  c: AdmissionCandidate,
): Assessment {
  const score = scoreOf(view, c);
  return {
    cluster: summary.name,
    tier: 2,
    score,
    message: `the gang fits now (score ${score})`,
    short: shortAmounts(null),
  };
}

/** Whether a cluster may be given jobs at all (what `assess` checks besides the selector). */
export const takesJobs = (s: ClusterSummary): boolean => !s.lost && s.ready && !s.cordoned;

/** The job's score on the view's cluster (the same whether it fits now or not). */
export function scoreOf(view: ClusterView, c: AdmissionCandidate): number {
  const total = jobTotal(c.spec);
  const r = dominantResource(total);
  const capacity = view.capacity[r];
  const headroom = view.headroom(c.spec.queue);
  const headroomAfter = headroom ? headroom[r] - total[r] : -total[r];
  return capacity > 0
    ? round(headroomAfter / capacity + (view.unheld[r] - view.backlog[r] - total[r]) / capacity)
    : 0;
}

/** Best first: tier, then score, then the cluster's name (deterministic). */
export const byPreference = (a: Assessment, b: Assessment): number =>
  b.tier - a.tier || b.score - a.score || (a.cluster < b.cluster ? -1 : a.cluster > b.cluster ? 1 : 0);
