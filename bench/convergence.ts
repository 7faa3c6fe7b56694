// Convergence benchmark of the core (not a test): consecutive scheduling cycles on one
// synthetic shape, the snapshot advanced between them as a cluster would, once per
// scenario-budget configuration. Answers: how long is each cycle, how many cycles until
// nothing changes, how many evictions on the way, and how close to the fair shares.
//
//   npm run bench:convergence -- [--shape kai-1000-contention|kai-4000-contention]
//     [--configs unbounded,128/1024,JOB/ACTION,...] [--cycles 30] [--period 10] [--json]
import {
  type QueueShare,
  type SessionParams,
  type Snapshot,
  advanceSnapshot,
  computeFairShare,
  createAction,
  defaultSchedulerConfig,
  openSession,
  sessionResult,
} from "../src/core/index.js";
import { largeShape } from "./generate.js";
import { median, time } from "./timing.js";

const SHAPES: Record<string, () => Snapshot> = {
  "kai-1000-contention": () => largeShape(7, true, 1000),
  "kai-4000-contention": () => largeShape(7, true),
};

/** Scenario budgets by name: "unbounded" (KAI's search) or JOB/ACTION, e.g. 128/1024 (the default). */
function budgets(name: string): Partial<SessionParams> | null {
  if (name === "unbounded") return { maxScenariosPerJob: -1, maxScenariosPerAction: -1 };
  const m = /^(-?\d+)\/(-?\d+)$/.exec(name);
  return m ? { maxScenariosPerJob: Number(m[1]), maxScenariosPerAction: Number(m[2]) } : null;
}

/** Sum over leaf queues of |allocated − fair share| in GPUs: 0 is the fair state. */
function fairDistance(shares: QueueShare[], leaves: Set<string>): number {
  let d = 0;
  for (const q of shares) if (leaves.has(q.queue)) d += Math.abs(q.allocated.gpu - q.fairShare.gpu);
  return +d.toFixed(2);
}

interface Cycle {
  cycle: number;
  /** Session build (openSession) plus all actions. */
  ms: number;
  binds: number;
  pipelines: number;
  evictions: number;
  cursors: number;
  /** Of them, those new or moved on this cycle (the others wait, unchanged, for a job no action got to). */
  active: number;
  /** Gangs below their minimum waiting out their grace period (they will be evicted later). */
  stale: number;
  /** Distance from the fair shares after this cycle. */
  distance: number;
}

function runConfig(
  shape: string,
  name: string,
  maxCycles: number,
  periodMs: number,
  print: (c: Cycle) => void,
) {
  const config = defaultSchedulerConfig();
  Object.assign(config.session, budgets(name));
  let snap = SHAPES[shape]!();
  const leaves = new Set(snap.queues.map((q) => q.name));
  for (const q of snap.queues) if (q.parent) leaves.delete(q.parent);
  const initial = fairDistance(computeFairShare(snap, config), leaves);
  const cycles: Cycle[] = [];
  let settledAfter: number | null = null;
  for (let i = 1; i <= maxCycles && settledAfter === null; i++) {
    const [ms0, ssn] = time(() => openSession(snap, config));
    // The previous cycle's distance is read here, untimed: the state it left, with the
    // fair shares recomputed on it (allocated quotas are live, so before any action).
    const prev = cycles[i - 2];
    if (prev) {
      prev.distance = fairDistance(ssn.queueSharesFn!(), leaves);
      print(prev);
    }
    const [ms1] = time(() => {
      for (const a of config.actions) createAction(a).execute(ssn);
    });
    const r = sessionResult(ssn);
    ssn.close();
    const given = new Set((snap.searchCursors ?? []).map((c) => JSON.stringify(c)));
    const c: Cycle = {
      cycle: i,
      ms: +(ms0 + ms1).toFixed(1),
      binds: r.binds.length,
      pipelines: r.pipelines.length,
      evictions: r.evictions.length,
      cursors: r.searchCursors.length,
      active: r.searchCursors.filter((x) => !given.has(JSON.stringify(x))).length,
      stale: [...ssn.jobs.values()].filter((j) => j.staleSince !== null).length,
      distance: Number.NaN,
    };
    cycles.push(c);
    snap = advanceSnapshot(snap, ssn, r, periodMs);
    // Settled: this cycle changed nothing and left nothing for later (no search that moved
    // on, no gang waiting to be evicted); the cycles before it did the work. An unchanged
    // cursor is dormant: its job was not tried (e.g. its queue is at its fair share).
    if (c.binds + c.pipelines + c.evictions + c.active + c.stale === 0) settledAfter = i - 1;
  }
  const last = cycles[cycles.length - 1]!;
  last.distance = fairDistance(computeFairShare(snap, config), leaves);
  print(last);
  const pods = snap.jobs.flatMap((j) => j.pods);
  const ms = cycles.map((c) => c.ms);
  const sum = (f: (c: Cycle) => number) => cycles.reduce((a, c) => a + f(c), 0);
  return {
    shape,
    config: name,
    cycles: cycles.length,
    settledAfter,
    /** The last cycle that bound, pipelined or evicted anything (later ones may only resume searches). */
    lastChange: cycles.findLast((c) => c.binds + c.pipelines + c.evictions > 0)?.cycle ?? 0,
    maxMs: Math.max(...ms),
    medianMs: +median(ms).toFixed(1),
    totalMs: +sum((c) => c.ms).toFixed(1),
    evictions: sum((c) => c.evictions),
    binds: sum((c) => c.binds),
    running: pods.filter((p) => p.status === "Running").length,
    pending: pods.filter((p) => p.status === "Pending").length,
    gpusUsed: pods.reduce((a, p) => a + (p.status === "Running" ? p.request.gpus : 0), 0),
    distance: last.distance,
    /** Before cycle 1, then after each cycle. */
    distanceSeries: [initial, ...cycles.map((c) => c.distance)],
  };
}

const args = process.argv.slice(2);
const opt = (name: string, dflt: string) => (args.includes(name) ? args[args.indexOf(name) + 1]! : dflt);
const json = args.includes("--json");
const shape = opt("--shape", "kai-1000-contention");
const names = opt("--configs", "unbounded,128/1024,64/512,-1/2048").split(",");
const maxCycles = Number(opt("--cycles", "30"));
const periodMs = Number(opt("--period", "10")) * 1000;
if (!(shape in SHAPES)) {
  console.error(`unknown shape ${shape}; known: ${Object.keys(SHAPES).join(", ")}`);
  process.exit(2);
}
for (const n of names)
  if (!budgets(n)) {
    console.error(`unknown configuration ${n}: "unbounded" or JOB/ACTION scenario budgets, e.g. 128/1024`);
    process.exit(2);
  }

// Warm-up (untimed): one cheap bounded cycle, so the first configuration does not pay for the JIT.
{
  const config = defaultSchedulerConfig();
  const ssn = openSession(SHAPES[shape]!(), config);
  for (const a of config.actions) createAction(a).execute(ssn);
}

const pad = (x: unknown, n: number) => String(x).padStart(n);
for (const name of names) {
  if (!json)
    console.log(
      `\n${shape}  config ${name}\n  cycle      ms  binds  pipel  evict  cursors  active  stale  distance`,
    );
  const s = runConfig(shape, name, maxCycles, periodMs, (c) => {
    if (json) console.log(JSON.stringify({ shape, config: name, ...c }));
    else
      console.log(
        `  ${pad(c.cycle, 5)} ${pad(c.ms, 7)} ${pad(c.binds, 6)} ${pad(c.pipelines, 6)} ${pad(c.evictions, 6)} ${pad(c.cursors, 8)} ${pad(c.active, 7)} ${pad(c.stale, 6)} ${pad(c.distance, 9)}`,
      );
  });
  if (json) console.log(JSON.stringify({ summary: true, ...s }));
  else
    console.log(
      [
        `  ${s.settledAfter === null ? `not settled after ${s.cycles} cycles` : `settled after ${s.settledAfter} cycles`}`,
        `last change in cycle ${s.lastChange}`,
        `cycle max ${s.maxMs} ms, median ${s.medianMs} ms, total ${s.totalMs} ms`,
        `evictions ${s.evictions}, binds ${s.binds}`,
        `end: running ${s.running} pods (${s.gpusUsed} GPUs), pending ${s.pending}, fair-share distance ${s.distance} GPUs`,
        `distance series: ${s.distanceSeries.join(" ")}`,
      ].join("\n  "),
    );
}
