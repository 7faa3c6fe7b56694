// One admission pass: every PENDING job without a cluster gets the best cluster for it (assess.ts)
// or stays unadmitted with the reason, per cluster, why none fits; a job that has waited long and
// entirely unplaced on its cluster moves to another where it fits now. Per chunk of jobs (highest
// priority, then oldest, first): read the candidates, decide (decide.ts, against views that
// remember what the pass already sent where), persist the decisions, each kind in one
// transaction, and count them.
import type { Logger } from "pino";
import type { SchedulerConfig } from "../../src/core/index.js";
import {
  type AdmissionCandidate,
  admissionCandidatesByIds,
  clusterSummaries,
  assignJobClusters,
  type ClusterSummary,
  readmissionCandidates,
  reassignJobCluster,
  setJobPendingReasons,
  type Store,
  type UnadmittedJob,
  type UsageWindow,
  unadmittedJobs,
} from "../../src/store/index.js";
import { admissionDecisionsTotal, admissionDryRunsTotal, admissionPass } from "../metrics.js";
import { ClusterView } from "./cluster-view.js";
import { type AdmissionDecision, type Decisions, decide } from "./decide.js";
import { AdmissionState, fullReads } from "./state.js";
import { chunks } from "./chunks.js";

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

/**
 * A pass goes through the unadmitted jobs it has not decided yet (every one after a cluster
 * change that can make room), in chunks (a page of jobs, cut at about `batchPods` pods): each
 * chunk is decided and committed before the next is read, so the first decisions reach the cycles
 * early and a head of jobs that fit nowhere never hides the ones behind it.
 */
export async function runAdmission(deps: AdmissionDeps): Promise<AdmissionReport> {
  const end = admissionPass.startTimer();
  const state = deps.state ?? new AdmissionState(fullReads(deps.store));
  const report: AdmissionReport = { considered: 0, assigned: [], reassigned: [], unplaced: 0, clusters: [] };
  const { work, basesMs } = await findWork(deps, state);
  if (basesMs !== undefined) report.basesMs = basesMs;
  if (!work) {
    end();
    return { ...report, skipped: true };
  }
  const views = new Map([...state.bases].map(([name, base]) => [name, new ClusterView(base)]));
  for await (const candidates of candidateChunks(deps, work)) {
    if (!candidates.length) continue;
    const decisions = decide(candidates, views, work.clusters);
    countDryRuns(views.values());
    const landed = await persist(deps, decisions);
    countDecisions(landed);
    report.considered += candidates.length;
    report.assigned.push(...landed.assigned);
    report.reassigned.push(...landed.reassigned);
    report.unplaced += landed.unplaced;
    for (const job of decisions.unplaced) state.unplaced.add(job);
    if (landed.clusters.length) await deps.onAssigned?.(landed.clusters);
  }
  report.clusters = clustersOf(report);
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

/** What a pass has to decide, on which clusters. */
interface Work {
  clusters: ClusterSummary[];
  /** The unadmitted jobs not decided yet, in admission's order. */
  todo: UnadmittedJob[];
  /** The re-admission candidates not decided yet. */
  readmit: AdmissionCandidate[];
  /** The first chunk's read, started early. */
  prefetched?: { ids: string[]; read: Promise<AdmissionCandidate[]> };
}

/**
 * The jobs to decide, with the clusters' bases brought up to date (how long that took, `basesMs`);
 * null when there is nothing to decide.
 */
async function findWork(
  deps: AdmissionDeps,
  state: AdmissionState,
): Promise<{ work: Work | null; basesMs?: number }> {
  const now = new Date();
  const [found, clusters] = await Promise.all([lookForJobs(deps, state, now), clusterSummaries(deps.store)]);
  if (!found.jobs.length && !found.readmit.length) return { work: null };
  // The first chunk is read while the clusters are brought up to date: the same chunk unless the
  // refresh brings back jobs held as unplaced.
  const early = chunks(
    found.jobs.filter((j) => !state.unplaced.has(j.id)),
    deps.batch,
    deps.batchPods,
  ).next().value;
  const prefetched = early ? { ids: early, read: admissionCandidatesByIds(deps.store, early) } : undefined;
  prefetched?.read.catch(() => {}); // a failed read is seen where it is used; unused, it is dropped
  const refreshing = performance.now();
  await state.refresh(clusters, deps.config, { now: now.getTime(), usage: deps.usageWindow ?? undefined });
  const basesMs = Math.round(performance.now() - refreshing);
  // After a cluster change that can make room, every job is looked at again.
  const todo = found.jobs.filter((j) => !state.unplaced.has(j.id));
  const readmit = found.readmit.filter((c) => !state.unplaced.has(c.spec.uid));
  if (!todo.length && !readmit.length) return { work: null, basesMs };
  return { work: { clusters, todo, readmit, prefetched }, basesMs };
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

/** The candidates of each chunk of `todo` (the first one's read may be under way already), the
 * re-admission candidates with the first chunk only, or alone when there is no chunk. */
async function* candidateChunks(
  deps: AdmissionDeps,
  { todo, readmit, prefetched }: Work,
): AsyncGenerator<AdmissionCandidate[]> {
  let first = true;
  for (const ids of chunks(todo, deps.batch, deps.batchPods)) {
    const read =
      first && prefetched && sameList(ids, prefetched.ids)
        ? prefetched.read
        : admissionCandidatesByIds(deps.store, ids);
    yield [...(await read), ...(first ? readmit : [])];
    first = false;
  }
  if (first && readmit.length) yield [...readmit];
}

/** What of a chunk's decisions landed. */
interface Landed {
  assigned: AdmissionDecision[];
  reassigned: (AdmissionDecision & { from: string })[];
  unplaced: number;
  /** Clusters that got jobs. */
  clusters: string[];
}

/**
 * Writes a chunk's decisions: the assignments in one transaction, each move in its own, the
 * pending reasons in one. A job changed meanwhile (admitted elsewhere, cancelled) is left out.
 */
async function persist(deps: AdmissionDeps, d: Decisions): Promise<Landed> {
  const landed = new Set(
    await assignJobClusters(
      deps.store,
      ADMISSION,
      d.assigned.map((x) => ({ job: x.job, cluster: x.cluster, message: x.message })),
    ),
  );
  const assigned = d.assigned.filter((x) => landed.has(x.job));
  const reassigned: Landed["reassigned"] = [];
  for (const x of d.reassigned) {
    const message = `waited ${Math.round(deps.readmitAfterMs / 1000)} s or more unplaced; ${x.message}`;
    if (await reassignJobCluster(deps.store, ADMISSION, { job: x.job, from: x.from, to: x.cluster, message }))
      reassigned.push(x);
  }
  await setJobPendingReasons(deps.store, ADMISSION, d.reasons);
  return { assigned, reassigned, unplaced: d.reasons.length, clusters: clustersOf({ assigned, reassigned }) };
}

const clustersOf = (r: Pick<AdmissionReport, "assigned" | "reassigned">): string[] =>
  [...new Set([...r.assigned, ...r.reassigned].map((d) => d.cluster))].sort();

function countDecisions(landed: Landed): void {
  for (const d of landed.assigned) admissionDecisionsTotal.inc({ outcome: "assigned", cluster: d.cluster });
  for (const d of landed.reassigned)
    admissionDecisionsTotal.inc({ outcome: "reassigned", cluster: d.cluster });
  admissionDecisionsTotal.inc({ outcome: "unplaced", cluster: "" }, landed.unplaced);
}

function countDryRuns(views: Iterable<ClusterView>): void {
  let now = 0;
  let empty = 0;
  for (const view of views) {
    const runs = view.takeDryRuns();
    now += runs.now;
    empty += runs.empty;
  }
  if (now) admissionDryRunsTotal.inc({ kind: "now" }, now);
  if (empty) admissionDryRunsTotal.inc({ kind: "empty" }, empty);
}
