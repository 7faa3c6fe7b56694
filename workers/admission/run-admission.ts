// One admission pass: every PENDING job without a cluster gets the best cluster for it (assess.ts)
// or stays unadmitted with the reason, per cluster, why none fits; a job that has waited long and
// entirely unplaced on its cluster moves to another where it fits now. Jobs are decided one at a
// time (highest priority, then oldest, first) against views that remember what the pass already
// sent where; the decisions are then persisted, each kind in one transaction.
import type { Logger } from "pino";
import type { SchedulerConfig } from "../../src/core/index.js";
import {
  type AdmissionCandidate,
  admissionCandidates,
  assignJobClusters,
  type ClusterSummary,
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
  batch: number;
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
  /** The batch was full: more jobs may be waiting. */
  more: boolean;
}

const ADMISSION = { name: "admission" };

export async function runAdmission(deps: AdmissionDeps): Promise<AdmissionReport> {
  const end = admissionDuration.startTimer();
  const now = new Date();
  const candidates = await admissionCandidates(deps.store.prisma, {
    limit: deps.batch,
    readmitAfterMs: deps.readmitAfterMs > 0 ? deps.readmitAfterMs : undefined,
    now,
  });
  const report: AdmissionReport = {
    considered: candidates.length,
    assigned: [],
    reassigned: [],
    unplaced: 0,
    clusters: [],
    more: candidates.filter((c) => c.cluster === null).length >= deps.batch,
  };
  if (!candidates.length) {
    end();
    return report;
  }
  const clusters = await listClusters(deps.store.prisma);
  const views = await loadViews(deps, clusters, candidates, now);
  const reasons: { job: string; reason: PendingReason }[] = [];

  for (const c of candidates) {
    const ranked = clusters.map((s) => assess(s, views.get(s.name), c)).sort(byPreference);
    const best = c.cluster === null ? ranked[0] : ranked.find((a) => a.tier === 2 && a.cluster !== c.cluster);
    if (best && best.tier > 0) {
      const decision = {
        job: c.spec.uid,
        cluster: best.cluster,
        tier: best.tier as 1 | 2,
        message: best.message,
      };
      views.get(best.cluster)!.admit(c, jobTotal(c.spec), best.tier === 2);
      if (c.cluster === null) report.assigned.push(decision);
      else report.reassigned.push({ ...decision, from: c.cluster });
    } else if (c.cluster === null) {
      reasons.push({ job: c.spec.uid, reason: unplacedReason(ranked) });
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
  end();
  if (report.assigned.length || report.reassigned.length || report.unplaced)
    deps.log.info(
      { assigned: report.assigned.length, reassigned: report.reassigned.length, unplaced: report.unplaced },
      "admission pass",
    );
  return report;
}

/** Snapshots of the ready, uncordoned clusters some candidate may go to, each evaluated once. */
async function loadViews(
  deps: AdmissionDeps,
  clusters: readonly ClusterSummary[],
  candidates: readonly AdmissionCandidate[],
  now: Date,
): Promise<Map<string, ClusterView>> {
  const views = new Map<string, ClusterView>();
  for (const s of clusters) {
    if (!s.ready || s.cordoned) continue;
    const mine = candidates.filter(
      (c) => c.cluster !== s.name && matchesSelector(s.labels, c.clusterSelector),
    );
    if (!mine.length) continue;
    const { snapshot } = await loadSnapshot(deps.store.prisma, s.name, {
      now: now.getTime(),
      usage: deps.usageWindow ?? undefined,
    });
    const view = new ClusterView(s, snapshot, deps.config);
    view.evaluate(mine);
    views.set(s.name, view);
  }
  return views;
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
