// Benchmark of a worker's scheduling cycle at cluster scale (not a test): one cluster seeded with
// bulk SQL (bench/seed-cluster.ts), then the cycle function of the workers (runCycle: cached view
// → session → fenced commit → dispatch) timed per step, as a worker process runs it on a cluster
// it owns (every commit carries the cluster's lease):
//   first                the process's first cycle of the cluster (full load; the pending gangs
//                        that fit are placed)
//   unchanged            after the cycle that follows a commit, nothing changed (skipped)
//   after-10-jobs        10 new jobs of 2 one-CPU pods submitted (submitJob, as the API does);
//                        --rounds times in a row (a worker runs such cycles all the time), the
//                        median of the rounds taken, the first round's wall time beside it
//   after-1000-finished  1,000 running one-GPU pods reported SUCCEEDED (reportPodStatus, as the
//                        agent does); the freed GPUs take waiting gangs
// Each run is a child process on its own copy of the seeded database; figures are medians.
//
//   npm run bench:cycle -- --nodes 4000 [--runs 3] [--rounds 5] [--json]
import { execFileSync } from "node:child_process";
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import { pino } from "pino";
import { defaultSchedulerConfig } from "../src/core/index.js";
import {
  acquireClusterLeases,
  ClusterCache,
  createStore,
  openDatabase,
  reportPodStatus,
  submitJob,
} from "../src/store/index.js";
import { prismaOf } from "../src/store/testing.js";
import { admin, createTestDatabase } from "../test/helpers/db.js";
import { TEST_REDIS_URL, deleteTestKeys, testRedisPrefix } from "../test/helpers/redis.js";
import { type CycleReport, runCycle } from "../workers/cycle/run-cycle.js";
import { SearchCursorStore } from "../workers/cycle/search-cursor-store.js";
import { BindDispatcher } from "../workers/dispatch/bind-dispatcher.js";
import { clusterShape, leafQueue, seedCluster } from "./seed-cluster.js";
import { median } from "./timing.js";

const CLUSTER = "c1";
const CYCLES = ["first", "unchanged", "after-10-jobs", "after-1000-finished"] as const;
type CycleName = (typeof CYCLES)[number];

interface Line {
  nodes: number;
  cycle: CycleName;
  wallMs: number;
  loadMs: number;
  sessionMs: number;
  commitMs: number;
  dispatchMs: number;
  binds: number;
  peakRssMb: number;
  /** after-10-jobs: the first round's wall time (the medians are over the rounds). */
  firstWallMs?: number;
}

const { values: args } = parseArgs({
  options: {
    nodes: { type: "string", default: "4000" },
    runs: { type: "string", default: "3" },
    rounds: { type: "string", default: "5" },
    json: { type: "boolean", default: false },
    child: { type: "string" },
  },
});
const nodes = Number(args.nodes);
if (!Number.isInteger(nodes) || nodes < 10)
  throw new Error(`--nodes: a whole number ≥ 10, got ${args.nodes}`);
const runs = Number(args.runs);
if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs: a whole number ≥ 1, got ${args.runs}`);
const rounds = Number(args.rounds);
if (!Number.isInteger(rounds) || rounds < 1)
  throw new Error(`--rounds: a whole number ≥ 1, got ${args.rounds}`);

const round = (ms: number) => Math.round(ms * 10) / 10;

/** One run, in this (child) process, on the database at `url`. */
async function runOnce(url: string): Promise<Line[]> {
  const db = await openDatabase(url);
  const store = createStore(db);
  const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  const prefix = testRedisPrefix("fleetq-bench-cycle");
  const log = pino({ level: "silent" });
  const dispatcher = new BindDispatcher(store, redis, `${prefix}bind`);
  // The cluster is owned, as in a worker: every commit carries the lease.
  const [lease] = await acquireClusterLeases(store, "bench", [CLUSTER], 3_600_000);
  const deps = {
    store,
    config: defaultSchedulerConfig(),
    dispatcher,
    usageWindow: null,
    backoff: { baseMs: 5_000, maxMs: 300_000 },
    staleRetries: 3,
    // No placement limit: the first cycle places every gang that fits, as its target counts.
    maxPlacements: 0,
    logIdleCycles: false,
    workerId: "bench",
    log,
    cache: new ClusterCache(store),
    memory: new Map(),
    carries: new Map(),
    searchCursors: new SearchCursorStore(redis, prefix, log),
    lease: () => ({ owner: "bench", epoch: lease!.epoch }),
  };
  const lines: Line[] = [];
  const measure = async (cycle: CycleName): Promise<Line> => {
    const t0 = performance.now();
    const r: CycleReport = await runCycle(deps, CLUSTER, "bench");
    const wallMs = performance.now() - t0;
    if (r.error) throw new Error(`cycle ${cycle}: ${r.error}`);
    return {
      nodes,
      cycle,
      wallMs: round(wallMs),
      loadMs: round(r.timings.loadMs),
      sessionMs: round(r.timings.sessionMs),
      commitMs: round(r.timings.commitMs),
      dispatchMs: round(r.timings.dispatchMs),
      binds: r.binds,
      peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    };
  };
  try {
    lines.push(await measure("first"));
    await runCycle(deps, CLUSTER, "bench"); // reads back its own commit
    lines.push(await measure("unchanged"));
    const after10: Line[] = [];
    for (let round = 0; round < rounds; round++) {
      for (let i = 0; i < 10; i++)
        await submitJob(
          store,
          { name: "bench" },
          {
            name: `new-${round}-${i}`,
            queue: leafQueue(i),
            cluster: CLUSTER,
            tasks: [{ name: "worker", replicas: 2, resources: { cpu: 1000, memory: "4Gi" } }],
          },
        );
      after10.push(await measure("after-10-jobs"));
    }
    lines.push({ ...medianLine(after10), firstWallMs: after10[0]!.wallMs });
    await finishGpuPods(store, 1000);
    lines.push(await measure("after-1000-finished"));
  } finally {
    await dispatcher.close();
    await deleteTestKeys(prefix, redis);
    redis.disconnect();
    await db.close();
  }
  return lines;
}

/** The median of each figure over `of` (lines of one cycle). */
function medianLine(of: readonly Line[]): Line {
  const m = (k: keyof Omit<Line, "nodes" | "cycle">) => round(median(of.map((l) => l[k] as number)));
  const line: Line = {
    nodes: of[0]!.nodes,
    cycle: of[0]!.cycle,
    wallMs: m("wallMs"),
    loadMs: m("loadMs"),
    sessionMs: m("sessionMs"),
    commitMs: m("commitMs"),
    dispatchMs: m("dispatchMs"),
    binds: m("binds"),
    peakRssMb: m("peakRssMb"),
  };
  if (of[0]!.firstWallMs !== undefined) line.firstWallMs = m("firstWallMs");
  return line;
}

/** Whole running one-GPU jobs, oldest first, until `pods` pods: reported SUCCEEDED by the agent. */
async function finishGpuPods(store: ReturnType<typeof createStore>, pods: number): Promise<void> {
  const rows = await prismaOf(store).$queryRawUnsafe<{ job_id: string; name: string }[]>(
    `SELECT p.job_id::text AS job_id, p.name FROM pod p JOIN job j ON j.id = p.job_id
     WHERE j.cluster_name = $1 AND j.state = 'RUNNING' AND p.state = 'RUNNING' AND p.gpus = 1
     ORDER BY j.created_at, j.id, p.name`,
    CLUSTER,
  );
  const chosen = rows.slice(0, pods);
  for (let i = 0; i < chosen.length; i += 500)
    await reportPodStatus(
      store,
      { name: `agent:${CLUSTER}` },
      {
        cluster: CLUSTER,
        updates: chosen
          .slice(i, i + 500)
          .map((p) => ({ job: p.job_id, pod: p.name, state: "SUCCEEDED" as const })),
      },
    );
}

async function main(): Promise<void> {
  if (args.child) {
    for (const line of await runOnce(args.child)) console.log(JSON.stringify(line));
    return;
  }
  const template = await createTestDatabase();
  const copies: string[] = [];
  try {
    const t0 = performance.now();
    await admin((c) => seedCluster(c, CLUSTER, clusterShape(nodes)), template.url);
    if (!args.json) console.error(`seeded ${nodes} nodes in ${Math.round(performance.now() - t0)} ms`);
    const results: Line[][] = [];
    for (let run = 0; run < runs; run++) {
      const name = `${template.name}_r${run}`;
      await admin((c) => c.query(`CREATE DATABASE "${name}" TEMPLATE "${template.name}"`));
      copies.push(name);
      const url = new URL(template.url);
      url.pathname = `/${name}`;
      const out = execFileSync(
        process.execPath,
        ["--import", "tsx", import.meta.filename, "--child", url.toString(), "--nodes", String(nodes)],
        {
          encoding: "utf8",
          stdio: ["ignore", "pipe", "inherit"],
          maxBuffer: 1 << 24,
        },
      );
      results.push(
        out
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l) as Line),
      );
      await admin((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
    }
    for (const cycle of CYCLES) {
      const line = medianLine(results.map((r) => r.find((l) => l.cycle === cycle)!));
      if (args.json) console.log(JSON.stringify(line));
      else
        console.log(
          `${cycle.padEnd(20)} whole ${String(line.wallMs).padStart(8)} ms  load ${line.loadMs} ms  session ${line.sessionMs} ms  ` +
            `commit ${line.commitMs} ms  dispatch ${line.dispatchMs} ms  binds ${line.binds}  peak RSS ${line.peakRssMb} MB` +
            (line.firstWallMs === undefined ? "" : `  (first round: whole ${line.firstWallMs} ms)`),
        );
    }
  } finally {
    for (const name of copies) await admin((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
    await template.drop();
  }
}

await main();
