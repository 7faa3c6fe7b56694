// submitJobs over HTTP against a local API server (`fleetq serve`, its own process, real
// PostgreSQL and Redis): one call of --jobs jobs (default 1,000; each 4 pods, labels, an
// idempotency key), timed from the request's send to its complete answer. The median over --runs
// runs (after a warm-up batch), with the CPU time per batch of the server and of the database's
// processes (local PostgreSQL), and the load average.
//
//   npm run bench:submit-batch -- [--runs 5] [--jobs 1000] [--pods 4]
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { createTestDatabase } from "../test/helpers/db.js";
import {
  cpuSeconds,
  createQueue,
  loadAverage,
  machine,
  post,
  saveResult,
  startServer,
  stopProcess,
} from "./processes.js";
import { median } from "./timing.js";

const { values: opt } = parseArgs({
  options: {
    runs: { type: "string", default: "5" },
    jobs: { type: "string", default: "1000" },
    pods: { type: "string", default: "4" },
  },
});
const RUNS = Number(opt.runs);
const JOBS = Number(opt.jobs);
const PODS = Number(opt.pods);
const TARGET_S = 0.5;

const adminToken = `fq_bench_${randomBytes(16).toString("hex")}`;
const SUBMIT_MANY = "mutation($i: [SubmitJobInput!]!) { submitJobs(inputs: $i) { id state } }";

/** One CI matrix: `jobs` jobs of `pods` pods, labelled with their pipeline and shard. */
function batch(pipeline: string, jobs: number): string {
  return JSON.stringify({
    query: SUBMIT_MANY,
    variables: {
      i: Array.from({ length: jobs }, (_, n) => ({
        name: `shard-${n}`,
        queue: "bench",
        idempotencyKey: `${pipeline}-${n}`,
        labels: [
          { key: "pipeline", value: pipeline },
          { key: "shard", value: String(n) },
        ],
        maxRuntimeSeconds: 3600,
        tasks: [{ name: "worker", replicas: PODS, resources: { cpu: 1000, memory: "4Gi", gpu: 1 } }],
      })),
    },
  });
}

async function submitBatch(url: string, pipeline: string, jobs: number): Promise<number> {
  const body = batch(pipeline, jobs);
  const start = performance.now();
  const res = await post(url, body, adminToken);
  const seconds = (performance.now() - start) / 1000;
  const parsed = JSON.parse(res.text) as { data?: { submitJobs: unknown[] }; errors?: { message: string }[] };
  if (res.status !== 200 || parsed.errors || parsed.data?.submitJobs.length !== jobs)
    throw new Error(`submitJobs failed: ${parsed.errors?.[0]?.message ?? `HTTP ${res.status}`}`);
  return seconds;
}

/** CPU seconds the database's server processes for `database` have used (local PostgreSQL:
 * its backends are processes on the benchmark's host); null when they cannot be read. */
async function databaseCpuSeconds(url: string, database: string): Promise<number | null> {
  const pg = (await import("pg")).default;
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const pids = (
      await c.query("SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", [
        database,
      ])
    ).rows.map((r: { pid: number }) => r.pid);
    let sum = 0;
    for (const pid of pids) {
      const s = cpuSeconds(pid);
      if (s === null) return null;
      sum += s;
    }
    return sum;
  } finally {
    await c.end();
  }
}

async function main() {
  const db = await createTestDatabase();
  const { url, proc } = await startServer(db.url, adminToken);
  try {
    await createQueue(url, adminToken);
    await submitBatch(url, "warm-up", Math.min(JOBS, 200)); // JIT, prepared statements, pools

    const seconds: number[] = [];
    const cpu: number[] = [];
    const dbCpu: number[] = [];
    for (let run = 1; run <= RUNS; run++) {
      const before = cpuSeconds(proc.pid);
      const dbBefore = await databaseCpuSeconds(db.url, db.name);
      const s = await submitBatch(url, `run-${run}`, JOBS);
      const after = cpuSeconds(proc.pid);
      const dbAfter = await databaseCpuSeconds(db.url, db.name);
      seconds.push(s);
      if (before !== null && after !== null) cpu.push(after - before);
      if (dbBefore !== null && dbAfter !== null) dbCpu.push(dbAfter - dbBefore);
      console.log(
        `run ${run}: ${JOBS} jobs (${JOBS * PODS} pods) in ${s.toFixed(3)} s; CPU: server ${cpu.at(-1)?.toFixed(2) ?? "?"} s, database ${dbCpu.at(-1)?.toFixed(2) ?? "?"} s`,
      );
    }
    const summary = {
      date: new Date().toISOString(),
      machine: machine(),
      jobs: JOBS,
      podsPerJob: PODS,
      runs: RUNS,
      secondsPerRun: seconds.map((s) => Number(s.toFixed(3))),
      medianSeconds: Number(median(seconds).toFixed(3)),
      serverCpuSecondsMedian: cpu.length ? Number(median(cpu).toFixed(3)) : null,
      databaseCpuSecondsMedian: dbCpu.length ? Number(median(dbCpu).toFixed(3)) : null,
      targetSeconds: TARGET_S,
      loadAverageAtEnd: loadAverage(),
    };
    console.log(JSON.stringify(summary, null, 2));
    console.log(
      `median ${summary.medianSeconds} s for ${JOBS} jobs in one submitJobs (target ≤ ${TARGET_S} s): ${summary.medianSeconds <= TARGET_S ? "met" : "NOT met"}`,
    );
    saveResult("submit-batch", summary);
  } finally {
    await stopProcess(proc);
    await db.drop();
  }
}

await main();
