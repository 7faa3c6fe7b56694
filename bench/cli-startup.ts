// Benchmark of the `fleetq` command's start (not a test): wall time of whole processes, as a CI
// pipeline sees them, median of several runs after one warm-up run each.
//   - `fleetq --version`
//   - `fleetq simulate` of a one-node, one-job scenario
//   - `fleetq simulate` of Armada's node-db shape (32,000 one-CPU jobs onto 1,000 nodes of
//     32 CPUs, as bench/generate.ts's armadaShape) written as a JSON scenario file, next to a bare
//     baseline of the same file in this process: read, JSON.parse, a greedy first-fit
//     (bench/greedy.ts) — no validation, queues, gangs or scoring.
//
//   npm run bench:cli                       (runs 7; --runs N, --jobs N, --nodes N, --json)
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import type { Snapshot } from "../src/core/index.js";
import { greedyFirstFit } from "./greedy.js";
import { median, time } from "./timing.js";

const { values: args } = parseArgs({
  options: {
    runs: { type: "string", default: "7" },
    jobs: { type: "string", default: "32000" },
    nodes: { type: "string", default: "1000" },
    json: { type: "boolean", default: false },
  },
});
const RUNS = Number(args.runs);
const JOBS = Number(args.jobs);
const NODES = Number(args.nodes);
const ROOT = path.resolve(import.meta.dirname, "..");
const BIN = path.join(ROOT, "bin", "fleetq.mjs");
const GiB = 1024 ** 3;

const dir = mkdtempSync(path.join(tmpdir(), "fleetq-bench-cli-"));
const oneNode = path.join(dir, "one-node.yaml");
writeFileSync(
  oneNode,
  [
    "name: one node",
    "actions: [allocate]",
    "nodes: { node0: { gpus: 1 } }",
    "queues: [{ name: q, deserved: { gpu: -1 } }]",
    "jobs: [{ name: j, queue: q, priority: 50, perTask: { gpus: 1 }, tasks: [{ state: Pending }] }]",
    "",
  ].join("\n"),
);

/** Armada's shape as a scenario file: two departments of two leaf queues each. */
function armadaScenario(nodes: number, jobs: number): object {
  const leaves = ["a-0", "a-1", "b-0", "b-1"];
  return {
    name: `armada ${jobs} jobs on ${nodes} nodes`,
    actions: ["allocate"],
    nodes: Object.fromEntries(
      Array.from({ length: nodes }, (_, i) => [
        `node-${i}`,
        { gpus: 0, cpuMillis: 32_000, memory: 256 * GiB, maxPods: 110 },
      ]),
    ),
    queues: [
      { name: "a", deserved: { gpu: -1, cpuMillis: -1, memory: -1 } },
      { name: "b", deserved: { gpu: -1, cpuMillis: -1, memory: -1 } },
      ...leaves.map((name) => ({ name, parent: name[0], deserved: { gpu: -1, cpuMillis: -1, memory: -1 } })),
    ],
    jobs: Array.from({ length: jobs }, (_, i) => ({
      name: `job-${i}`,
      queue: leaves[i % leaves.length],
      priority: 50,
      perTask: { gpus: 0, cpuMillis: 1000, memory: GiB },
      tasks: [{ state: "Pending" }],
    })),
  };
}
const armada = path.join(dir, "armada.json");
writeFileSync(armada, JSON.stringify(armadaScenario(NODES, JOBS)));

interface ScenarioDoc {
  nodes: Record<string, { gpus: number; cpuMillis: number; memory: number }>;
  jobs: {
    perTask: { gpus: number; cpuMillis: number; memory: number };
    tasks: { state: string; node?: string | null }[];
  }[];
}

/** The baseline: the file read and parsed, then one greedy first-fit pass over its pods. */
function bareParseAndFirstFit(file: string): number {
  const doc = JSON.parse(readFileSync(file, "utf8")) as ScenarioDoc;
  const snapshot = {
    nodes: Object.entries(doc.nodes).map(([name, n]) => ({
      name,
      allocatable: { cpuMillis: n.cpuMillis, memory: n.memory, gpus: n.gpus },
    })),
    jobs: doc.jobs.map((j) => ({
      pods: j.tasks.map((t) => ({
        status: t.state,
        node: t.node ?? null,
        request: { ...j.perTask, gpuFraction: 0 },
      })),
    })),
  } as unknown as Snapshot;
  return greedyFirstFit(snapshot);
}

function runCli(cliArgs: string[]): number {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [BIN, ...cliArgs], { encoding: "utf8", maxBuffer: 1 << 30 });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`fleetq ${cliArgs.join(" ")} exited ${r.status}: ${r.stderr}`);
  return ms;
}

function measure(f: () => number): { median: number; min: number; max: number } {
  f(); // warm-up (file cache)
  const xs = Array.from({ length: RUNS }, f);
  return { median: median(xs), min: Math.min(...xs), max: Math.max(...xs) };
}

const round = (ms: number) => Math.round(ms);
const rows: Record<string, unknown>[] = [];
const report = (step: string, m: { median: number; min: number; max: number }, extra = {}) => {
  const row = { step, medianMs: round(m.median), minMs: round(m.min), maxMs: round(m.max), ...extra };
  rows.push(row);
  if (args.json) console.log(JSON.stringify(row));
  else
    console.log(
      `${step.padEnd(44)} median ${String(row.medianMs).padStart(6)} ms  (min ${row.minMs}, max ${row.maxMs})`,
    );
};

try {
  report(
    "fleetq --version",
    measure(() => runCli(["--version"])),
  );
  report(
    "fleetq simulate (one node)",
    measure(() => runCli(["simulate", oneNode])),
  );
  const baseline = measure(() => time(() => bareParseAndFirstFit(armada))[0]);
  report(`baseline: parse + first-fit (${JOBS} jobs)`, baseline);
  const sim = measure(() => runCli(["simulate", armada]));
  report(`fleetq simulate (${JOBS} jobs, ${NODES} nodes)`, sim, {
    ratio: Math.round((sim.median / baseline.median) * 10) / 10,
  });
  const [l1, l5] = loadavg();
  if (!args.json)
    console.log(`ratio ${rows.at(-1)!.ratio}; load average ${l1!.toFixed(2)} ${l5!.toFixed(2)}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
