// Benchmark of one scheduling cycle of the core (not a test): seeded synthetic shapes,
// each step timed over several runs (median), next to a naive greedy first-fit placement
// of the same pods on the same snapshot measured in the same run.
//
//   npm run bench:core                         all shapes, one child process each
//   npm run bench:core -- --shape NAME --json  one shape, JSON lines
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import {
  type SessionParams,
  type Snapshot,
  createAction,
  defaultSchedulerConfig,
  openSession,
} from "../src/core/index.js";
import { greedyFirstFit } from "./greedy.js";
import { armadaShape, kaiShape, largeShape, mixedShape } from "./generate.js";
import { median, time } from "./timing.js";

interface Shape {
  name: string;
  build: () => Snapshot;
  runs: number;
  /** Actions of the measured cycle. */
  actions: ("allocate" | "consolidation" | "reclaim" | "preempt" | "stalegangeviction")[];
  /** Session parameters beside the defaults (the unbounded search of KAI). */
  session?: Partial<SessionParams>;
}

/** KAI's unbounded victim search (fleetq bounds it by default; see bench/convergence.ts). */
const UNBOUNDED: Partial<SessionParams> = { maxScenariosPerJob: -1, maxScenariosPerAction: -1 };

const ALL: Shape["actions"] = ["allocate", "consolidation", "reclaim", "preempt", "stalegangeviction"];

const SHAPES: Shape[] = [
  { name: "kai-10x50", build: () => kaiShape(10, 50), runs: 15, actions: ["allocate"] },
  { name: "kai-50x200", build: () => kaiShape(50, 200), runs: 15, actions: ["allocate"] },
  { name: "kai-100x500", build: () => kaiShape(100, 500), runs: 15, actions: ["allocate"] },
  { name: "armada-cpu-32k", build: () => armadaShape(1000, 32_000, false), runs: 5, actions: ["allocate"] },
  { name: "armada-gpu-32k", build: () => armadaShape(4000, 32_000, true), runs: 5, actions: ["allocate"] },
  { name: "kai-4000-nodes", build: () => largeShape(), runs: 5, actions: ["allocate"] },
  { name: "mixed-100x1000", build: () => mixedShape(100, 1000), runs: 9, actions: ["allocate"] },
  // Over-quota running gangs and higher-priority pending gangs: every action has work.
  { name: "kai-1000-contention", build: () => largeShape(7, true, 1000), runs: 3, actions: ALL },
  { name: "kai-4000-contention", build: () => largeShape(7, true), runs: 5, actions: ALL },
  // The same with four times the backlog: 10,000 pending gangs (40,000 pods).
  {
    name: "kai-4000-contention-4x-pending",
    build: () => largeShape(7, true, 4000, 4),
    runs: 3,
    actions: ALL,
  },
  {
    name: "kai-4000-contention-unbounded",
    build: () => largeShape(7, true),
    runs: 1,
    actions: ALL,
    session: UNBOUNDED,
  },
];

function runShape(shape: Shape): Record<string, unknown>[] {
  const snapshot = shape.build();
  const config = defaultSchedulerConfig();
  config.actions = shape.actions;
  Object.assign(config.session, shape.session ?? {});
  const steps: Record<string, number[]> = { session: [], actions: [], total: [] };
  // With several actions, each one's time too (its share of the cycle).
  const perAction: Record<string, number[]> = {};
  for (const a of shape.actions.length > 1 ? shape.actions : []) perAction[a] = [];
  const baseline: number[] = [];
  let placed = 0;
  let greedyPlaced = 0;
  let evictions = 0;
  let stoppedSearches = 0;
  for (let i = 0; i <= shape.runs; i++) {
    const [tb, placedGreedy] = time(() => greedyFirstFit(snapshot));
    const [ts, ssn] = time(() => openSession(snapshot, config));
    const actionMs: Record<string, number> = {};
    const [ta] = time(() => {
      for (const a of config.actions) actionMs[a] = time(() => createAction(a).execute(ssn))[0];
    });
    if (i === 0) continue; // warm-up
    for (const a of Object.keys(perAction)) perAction[a]!.push(actionMs[a]!);
    baseline.push(tb);
    steps.session!.push(ts);
    steps.actions!.push(ta);
    steps.total!.push(ts + ta);
    placed = ssn.binds.length + ssn.pipelines.length;
    evictions = ssn.evictions.length;
    stoppedSearches = ssn.searchCursors.result(ssn).length;
    greedyPlaced = placedGreedy;
  }
  const rss = process.resourceUsage().maxRSS / 1024;
  const base = median(baseline);
  const actions = shape.actions.length > 1 ? "all-actions" : shape.actions[0]!;
  const rows: [string, number[]][] = [
    ["snapshot-build", steps.session!],
    ...Object.entries(perAction),
    [actions, steps.actions!],
    [`snapshot-build+${actions}`, steps.total!],
  ];
  return rows.map(([step, xs]) => ({
    shape: shape.name,
    step,
    medianMs: +median(xs).toFixed(2),
    minMs: +Math.min(...xs).toFixed(2),
    maxMs: +Math.max(...xs).toFixed(2),
    baselineMedianMs: +base.toFixed(2),
    ratio: +(median(xs) / base).toFixed(2),
    peakRssMb: Math.round(rss),
    placedPods: placed,
    baselinePlacedPods: greedyPlaced,
    evictions,
    stoppedSearches,
  }));
}

const args = process.argv.slice(2);
const json = args.includes("--json");
const shapeArg = args.indexOf("--shape") >= 0 ? args[args.indexOf("--shape") + 1] : undefined;

if (shapeArg) {
  const shape = SHAPES.find((s) => s.name === shapeArg);
  if (!shape) {
    console.error(`unknown shape ${shapeArg}; known: ${SHAPES.map((s) => s.name).join(", ")}`);
    process.exit(2);
  }
  for (const line of runShape(shape)) console.log(json ? JSON.stringify(line) : line);
} else {
  // One child process per shape, so peak memory is the shape's own.
  const self = fileURLToPath(import.meta.url);
  for (const s of SHAPES) {
    const out = execFileSync(process.execPath, [...process.execArgv, self, "--shape", s.name, "--json"], {
      encoding: "utf8",
      maxBuffer: 1 << 24,
    });
    for (const line of out.trim().split("\n")) {
      if (json) console.log(line);
      else {
        const r = JSON.parse(line);
        console.log(
          `${r.shape.padEnd(20)} ${r.step.padEnd(34)} median ${String(r.medianMs).padStart(9)} ms  (min ${r.minMs}, max ${r.maxMs})  greedy ${r.baselineMedianMs} ms  ratio ${r.ratio}  rss ${r.peakRssMb} MB  placed ${r.placedPods}/${r.baselinePlacedPods}  evicted ${r.evictions}  stopped searches ${r.stoppedSearches}`,
        );
      }
    }
  }
}
