// Accuracy of the start-time estimates. A simulated cluster (--nodes nodes of 8 GPUs, four team
// queues of equal deserved share under one root) receives a stream of --jobs gangs (1, 2, 4 or 8
// GPUs per pod, 1–4 pods, run times 5–120 min, all known) arriving at random (Poisson) at an
// offered load of --load (GPU-time asked per GPU-time available). The cluster runs with the real
// core (default configuration): a session at every arrival and every job's end, and one more a
// step after a session that decided something. When a job arrives, its start is estimated on the
// cluster as it is at that moment (src/estimate: the cluster simulated forward with the same core,
// and in --scenarios scenarios of arrivals drawn from the jobs submitted in the last
// --recent-window minutes, the median start taken; --scenarios 0: without arrivals only);
// when it actually starts, the error |estimated − actual| is taken as a share of its wait (actual
// start − arrival), for the jobs that waited at least a minute.
//
// Two runs of the same streams: run times declared (expectedRuntimeSeconds on every job), and not
// declared (each queue's running estimate from the run times of its last 50 finished jobs, as the
// workers use it). The
// estimator runs with the workers' defaults (24 h horizon, --sessions 200 sessions). --seeds
// streams are pooled. --foresight gives the estimator the jobs still to come (a check: the error
// left is then only what it cannot know). --halfway re-estimates every waiting job at every arrival
// and end (as the workers do) and scores the estimate each job had halfway through its wait.
// Purely in memory: no database, no Redis.
//
//   npm run bench:estimates -- [--nodes 8] [--queues 4] [--jobs 150] [--load 0.9] [--seed 1]
//                              [--seeds 3] [--sessions 200] [--only declared|history] [--foresight]
//                              [--halfway] [--scenarios 4] [--recent-window 60] [--json]
import { parseArgs } from "node:util";
import {
  type NodeSpec,
  type PodGroupSpec,
  type QueueSpec,
  type Snapshot,
  advanceSnapshot,
  createAction,
  defaultSchedulerConfig,
  openSession,
  sessionResult,
} from "../src/core/index.js";
import type { JobRuntime } from "../src/estimate/estimate-starts.js";
import { estimateStartsWithArrivals, type RecentJob } from "../src/estimate/scenarios.js";
import { prng } from "../test/helpers/prng.js";
import { median } from "./timing.js";

const { values: opt } = parseArgs({
  options: {
    nodes: { type: "string", default: "8" },
    jobs: { type: "string", default: "150" },
    load: { type: "string", default: "0.9" },
    seed: { type: "string", default: "1" },
    seeds: { type: "string", default: "3" },
    queues: { type: "string", default: "4" },
    foresight: { type: "boolean", default: false },
    halfway: { type: "boolean", default: false },
    sessions: { type: "string", default: "200" },
    scenarios: { type: "string", default: "4" },
    "recent-window": { type: "string", default: "60" },
    only: { type: "string" },
    json: { type: "boolean", default: false },
  },
});
const NODES = Number(opt.nodes);
const JOBS = Number(opt.jobs);
const LOAD = Number(opt.load);
const SEED = Number(opt.seed);
const SEEDS = Number(opt.seeds);
for (const [k, v] of Object.entries({ nodes: NODES, jobs: JOBS, load: LOAD }))
  if (!(v > 0)) throw new Error(`--${k} must be a positive number`);

const MIN = 60_000;
const STEP = 1_000;
const T0 = Date.UTC(2026, 0, 1);
const QUEUES = Array.from({ length: Number(opt.queues) }, (_, i) => `team-${String.fromCharCode(97 + i)}`);
const config = defaultSchedulerConfig();

interface Arrival {
  at: number;
  job: PodGroupSpec;
  runtimeMs: number;
}

function nodes(): NodeSpec[] {
  return Array.from({ length: NODES }, (_, i) => ({
    name: `n${String(i).padStart(3, "0")}`,
    labels: {},
    taints: [],
    unschedulable: false,
    ready: true,
    allocatable: { cpuMillis: 128_000, memory: 1e12, gpus: 8, pods: 110, extended: {} },
    gpuMemory: 81920,
    gpuMemorySynced: true,
    gpuModel: "H100",
    migStrategy: null,
  }));
}

function queues(): QueueSpec[] {
  const q = (name: string, parent: string | null, gpu: number, i: number): QueueSpec => ({
    name,
    parent,
    priority: 100,
    createdAt: T0 - 1000 + i,
    deserved: { gpu, cpuMillis: -1, memory: -1 },
    limit: { gpu: -1, cpuMillis: -1, memory: -1 },
    overQuotaWeight: { gpu: 1, cpuMillis: 1, memory: 1 },
  });
  return [
    q("org", null, NODES * 8, 0),
    ...QUEUES.map((n, i) => q(n, "org", (NODES * 8) / QUEUES.length, i + 1)),
  ];
}

function arrivals(seed: number): Arrival[] {
  const r = prng(seed);
  const shapes = [
    { gpus: 1, pods: 1 },
    { gpus: 2, pods: 1 },
    { gpus: 4, pods: 1 },
    { gpus: 8, pods: 1 },
    { gpus: 8, pods: 2 },
    { gpus: 4, pods: 4 },
  ];
  const jobs = Array.from({ length: JOBS }, (_, i) => {
    const shape = r.pick(shapes);
    const runtimeMs = Math.round(((5 + r.next() * 115) * MIN) / 1000) * 1000;
    return { i, shape, runtimeMs, queue: QUEUES[r.int(QUEUES.length)]! };
  });
  // Poisson arrivals at the offered load: mean GPU-time per job / (load × GPUs).
  const meanWork = jobs.reduce((n, j) => n + j.shape.gpus * j.shape.pods * j.runtimeMs, 0) / JOBS;
  const gap = meanWork / (LOAD * NODES * 8);
  let at = T0;
  return jobs.map(({ i, shape, runtimeMs, queue }) => {
    at += Math.round(-Math.log(1 - r.next()) * gap);
    const uid = `j${String(i).padStart(5, "0")}`;
    const job: PodGroupSpec = {
      uid,
      name: uid,
      namespace: "default",
      queue,
      priority: 50,
      preemptible: true,
      minMember: shape.pods,
      createdAt: at,
      lastStartAt: null,
      staleSince: null,
      subGroups: [],
      topology: null,
      pods: Array.from({ length: shape.pods }, (_, k) => ({
        uid: `${uid}-${k}`,
        name: `${uid}-${k}`,
        namespace: "default",
        status: "Pending" as const,
        node: null,
        request: {
          cpuMillis: 1000,
          memory: 1e9,
          gpus: shape.gpus,
          gpuFraction: 0,
          gpuMemory: 0,
          mig: {},
          extended: {},
        },
        gpuGroups: [],
        labels: {},
        subGroup: null,
        priority: null,
        createdAt: at,
      })),
    };
    return { at, job, runtimeMs };
  });
}

interface Sample {
  waitMs: number;
  errorMs: number | null;
  /** The estimate was earlier than the actual start. */
  early: boolean;
}

/** The cluster run with the real core; an estimate for each job as it arrives. */
function run(declared: boolean, seed: number): { samples: Sample[]; sessions: number; estimateMs: number } {
  const stream = arrivals(seed);
  const runtime = new Map(stream.map((a) => [a.job.uid, a.runtimeMs]));
  const arrivedAt = new Map(stream.map((a) => [a.job.uid, a.at]));
  let snap: Snapshot = { now: T0, nodes: nodes(), queues: queues(), jobs: [], topologies: [] };
  const ends = new Map<string, number>();
  const started = new Map<string, number>();
  const estimates = new Map<string, number | null>();
  /** --halfway: every waiting job's estimates, re-made at every arrival and end. */
  const series = new Map<string, { at: number; est: number | null }[]>();
  const finished = new Map<string, number[]>(QUEUES.map((q) => [q, []]));
  let next = 0;
  let again: number | null = null;
  let sessions = 0;
  let estimateMs = 0;
  while (next < stream.length || ends.size || again !== null) {
    let t = Number.POSITIVE_INFINITY;
    if (next < stream.length) t = stream[next]!.at;
    for (const e of ends.values()) t = Math.min(t, e);
    if (again !== null) t = Math.min(t, again);
    if (!Number.isFinite(t)) break;
    const done = new Set([...ends].filter(([, e]) => e <= t).map(([uid]) => uid));
    for (const uid of done) {
      ends.delete(uid);
      const job = snap.jobs.find((j) => j.uid === uid)!;
      const list = finished.get(job.queue)!;
      list.push(runtime.get(uid)!);
      if (list.length > 50) list.shift();
    }
    const arrived: string[] = [];
    const jobs = snap.jobs.filter((j) => !done.has(j.uid));
    while (next < stream.length && stream[next]!.at <= t) {
      jobs.push(stream[next]!.job);
      arrived.push(stream[next]!.job.uid);
      next++;
    }
    snap = { ...snap, now: t, jobs };
    if (arrived.length || (opt.halfway && done.size)) {
      const runtimes = new Map<string, JobRuntime>();
      const queueRuntimeSamplesMs = new Map<string, number[]>();
      if (declared) for (const j of snap.jobs) runtimes.set(j.uid, { expectedMs: runtime.get(j.uid)! });
      else for (const [q, list] of finished) if (list.length) queueRuntimeSamplesMs.set(q, [...list]);
      const t0 = performance.now();
      // The jobs submitted in the last window: the pattern of those still to come.
      const recentWindowMs = Number(opt["recent-window"]) * MIN;
      const recent: RecentJob[] = [];
      for (const a of stream.slice(0, next)) {
        if (a.at <= t - recentWindowMs) continue;
        const list = finished.get(a.job.queue)!;
        const runtimeMs = declared ? a.runtimeMs : list.length ? median(list) : null;
        if (runtimeMs != null) recent.push({ job: a.job, runtimeMs });
      }
      if (opt.foresight)
        for (const a of stream.slice(next)) runtimes.set(a.job.uid, { expectedMs: a.runtimeMs });
      const future = opt.foresight ? stream.slice(next).map((a) => ({ at: a.at, job: a.job })) : [];
      const est = estimateStartsWithArrivals(snap, config, {
        runtimes,
        queueRuntimeSamplesMs,
        jobs: opt.halfway ? undefined : arrived,
        stepMs: STEP,
        arrivals: future,
        maxSessions: Number(opt.sessions),
        recent,
        recentWindowMs,
        scenarios: opt.foresight ? 0 : Number(opt.scenarios),
      });
      estimateMs += performance.now() - t0;
      for (const uid of arrived) estimates.set(uid, est.starts.get(uid) ?? null);
      if (opt.halfway)
        for (const [uid, e] of est.starts) {
          const list = series.get(uid) ?? [];
          list.push({ at: t, est: e });
          series.set(uid, list);
        }
    }
    const ssn = openSession(snap, config);
    for (const a of config.actions) createAction(a).execute(ssn);
    const result = sessionResult(ssn);
    sessions++;
    for (const e of result.evictions) ends.delete(e.job);
    for (const b of result.binds) {
      if (!started.has(b.job)) started.set(b.job, t);
      if (!ends.has(b.job)) ends.set(b.job, t + runtime.get(b.job)!);
    }
    snap = advanceSnapshot(snap, ssn, result, 0);
    ssn.close();
    again = result.binds.length + result.pipelines.length + result.evictions.length ? t + STEP : null;
  }
  const samples: Sample[] = [];
  for (const [uid, start] of started) {
    const waitMs = start - arrivedAt.get(uid)!;
    if (waitMs < MIN) continue;
    const halfway = arrivedAt.get(uid)! + waitMs / 2;
    const est = opt.halfway
      ? (series
          .get(uid)
          ?.filter((x) => x.at <= halfway)
          .at(-1)?.est ?? null)
      : estimates.get(uid);
    samples.push({
      waitMs,
      errorMs: est == null ? null : Math.abs(est - start),
      early: est != null && est < start,
    });
  }
  return { samples, sessions, estimateMs };
}

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]! : Number.NaN;
}

const modes = opt.only === "declared" ? [true] : opt.only === "history" ? [false] : [true, false];
const rows = modes.map((declared) => {
  // The streams of --seeds seeds from --seed on, pooled.
  const r = { samples: [] as Sample[], sessions: 0, estimateMs: 0 };
  for (let k = 0; k < SEEDS; k++) {
    const one = run(declared, SEED + k);
    r.samples.push(...one.samples);
    r.sessions += one.sessions;
    r.estimateMs += one.estimateMs;
  }
  const known = r.samples.filter((s) => s.errorMs !== null);
  const pct = known.map((s) => (100 * s.errorMs!) / s.waitMs);
  const minutes = known.map((s) => s.errorMs! / MIN);
  return {
    runTimes: (declared ? "declared" : "queue history") + (opt.halfway ? ", halfway" : ""),
    waited: r.samples.length,
    unknown: r.samples.length - known.length,
    medianWaitMin: median(r.samples.map((s) => s.waitMs / MIN)),
    medianErrorPct: median(pct),
    /** Share of the estimates that were too early (jobs arriving later overtook). */
    earlyPct: (100 * known.filter((s) => s.early).length) / known.length,
    p90ErrorPct: percentile(pct, 90),
    medianErrorMin: median(minutes),
    p90ErrorMin: percentile(minutes, 90),
    sessions: r.sessions,
    estimateMsPerJob: r.estimateMs / (JOBS * SEEDS),
  };
});

if (opt.json)
  console.log(
    JSON.stringify({ nodes: NODES, gpus: NODES * 8, jobs: JOBS, load: LOAD, seed: SEED, seeds: SEEDS, rows }),
  );
else {
  console.log(
    `${NODES} nodes (${NODES * 8} GPUs), ${QUEUES.length} queues, ${JOBS} jobs per stream, offered load ${LOAD}, seeds ${SEED}..${SEED + SEEDS - 1}`,
  );
  console.log(
    "run times       waited  no estimate  median wait  median error  p90 error  (minutes)     too early  ms/estimate",
  );
  for (const r of rows)
    console.log(
      `${r.runTimes.padEnd(14)}  ${String(r.waited).padStart(6)}  ${String(r.unknown).padStart(11)}  ${r.medianWaitMin.toFixed(1).padStart(8)} min  ${r.medianErrorPct.toFixed(1).padStart(10)} %  ${r.p90ErrorPct.toFixed(1).padStart(7)} %  (${r.medianErrorMin.toFixed(1)} / ${r.p90ErrorMin.toFixed(1)})  ${r.earlyPct.toFixed(0).padStart(7)} %  ${r.estimateMsPerJob.toFixed(1).padStart(10)}`,
    );
}
