// Admission at scale: the workers' own runAdmission (with the state a worker keeps between
// passes, its own cluster cache) over clusters of 1,000 nodes (8 GPUs, 128 CPUs, 1 TiB) each
// holding 25,000 running pods (6,000 one-GPU, 19,000 one-CPU, in jobs of 5), 200 leaf queues
// under 4 departments, seeded with bulk SQL on a fresh database per run. Timed passes:
//   cold          two unadmitted jobs (one fits, one never fits anywhere), nothing held yet (every
//                 cluster loaded in full)
//   1000-jobs     the backlog of --jobs gangs of 4 one-GPU pods, caches warm
//   after-own     the pass after that (the clusters changed by the pass's own assignments)
//   unchanged     nothing changed since
//   one-new-job   one more gang submitted
// Figures are medians over --runs.
//
//   npm run bench:admission -- [--runs 3] [--clusters 10] [--nodes 1000] [--jobs 1000] [--json]
//     [--profile <pass>]   writes a CPU profile of that pass (each run) to admission-<pass>-<run>.cpuprofile
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { parseArgs } from "node:util";
import pg from "pg";
import { pino } from "pino";
import { defaultSchedulerConfig } from "../src/core/index.js";
import { ClusterCache, createStore, openDatabase } from "../src/store/index.js";
import { submitJob } from "../src/store/operations/submit-job.js";
import { createTestDatabase } from "../test/helpers/db.js";
import { type AdmissionReport, AdmissionState, runAdmission } from "../workers/index.js";
import { metrics } from "../workers/metrics.js";
import { median } from "./timing.js";
import { CPU_PODS_PER_NODE, GPU_PODS_PER_NODE, LEAVES, leaf, POD_MEMORY, seedFleet } from "./seed-fleet.js";

/** Allocate dry runs admission ran so far (all kinds). */
const dryRuns = async () =>
  (await metrics.getSingleMetric("fleetq_admission_dry_runs_total")!.get()).values.reduce(
    (n, v) => n + v.value,
    0,
  );

const { values: opt } = parseArgs({
  options: {
    runs: { type: "string", default: "3" },
    clusters: { type: "string", default: "10" },
    nodes: { type: "string", default: "1000" },
    jobs: { type: "string", default: "1000" },
    json: { type: "boolean", default: false },
    profile: { type: "string" },
  },
});
const RUNS = Number(opt.runs);
const CLUSTERS = Number(opt.clusters);
const NODES = Number(opt.nodes);
const JOBS = Number(opt.jobs);
for (const [k, v] of Object.entries({ runs: RUNS, clusters: CLUSTERS, nodes: NODES, jobs: JOBS }))
  if (!Number.isInteger(v) || v <= 0) throw new Error(`--${k} must be a positive integer`);
if (CLUSTERS > 100) throw new Error("--clusters must be at most 100");
const PROFILE = opt.profile;

const PASSES = ["cold", "1000-jobs", "after-own", "unchanged", "one-new-job"] as const;
type Pass = (typeof PASSES)[number];
if (PROFILE !== undefined && !(PASSES as readonly string[]).includes(PROFILE))
  throw new Error(`--profile must be one of ${PASSES.join(", ")}`);
let profiled = 0;

/** `count` unadmitted gangs of `replicas` pods of `gpus` GPUs each, as submitJob writes them. */
async function backlog(c: pg.Client, count: number, prefix: string, replicas = 4, gpus = 1): Promise<void> {
  await c.query(
    `CREATE TEMP TABLE seed_pending AS SELECT g, gen_random_uuid() AS id FROM generate_series(0, $1 - 1) g`,
    [count],
  );
  await c.query(
    `INSERT INTO job (id, name, namespace, queue_name, cluster_name, cluster_selector, priority, preemptible,
       min_member, sub_groups, state, spec_hash, submitted_by, created_at, updated_at)
     SELECT id, $2 || g, 'default', 'team-' || lpad((g % $1)::text, 3, '0'), NULL, '[]', 50, true, $3, '[]',
       'PENDING', 'bench', 'bench', now() + g * interval '1 microsecond', now()
     FROM seed_pending`,
    [LEAVES, prefix, replicas],
  );
  await c.query(
    `INSERT INTO job_task (job_id, name, replicas, cpu_millis, memory, gpus, gpu_fraction, gpu_memory, node_selector)
     SELECT id, 'w', $2, 4000, $1, $3, 0, 0, '[]' FROM seed_pending`,
    [POD_MEMORY, replicas, gpus],
  );
  await c.query(
    `INSERT INTO pod (id, job_id, task_name, name, state, cpu_millis, memory, gpus, gpu_fraction, gpu_memory,
       created_at, updated_at)
     SELECT gen_random_uuid(), id, 'w', $2 || g || '-w-' || j, 'PENDING', 4000, $1, $4, 0, 0, now(), now()
     FROM seed_pending, generate_series(0, $3 - 1) j`,
    [POD_MEMORY, prefix, replicas, gpus],
  );
  await c.query("DROP TABLE seed_pending");
}

interface Timed {
  pass: Pass;
  wallMs: number;
  /** This process's CPU time in the pass (the database's not included). */
  cpuMs: number;
  dryRuns: number;
  considered: number;
  assigned: number;
  skipped: boolean;
}

async function run(): Promise<Timed[]> {
  const testDb = await createTestDatabase();
  const db = await openDatabase(testDb.url);
  const client = new pg.Client({ connectionString: testDb.url });
  await client.connect();
  try {
    await seedFleet(client, CLUSTERS, NODES);
    const store = createStore(db);
    const state = new AdmissionState(new ClusterCache(store));
    const pass = async (name: Pass): Promise<Timed> => {
      const inspector = name === PROFILE ? new Session() : null;
      if (inspector) {
        inspector.connect();
        await inspector.post("Profiler.enable");
        await inspector.post("Profiler.start");
      }
      const runs0 = await dryRuns();
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      const r: AdmissionReport = await runAdmission({
        store,
        config: defaultSchedulerConfig(),
        usageWindow: null,
        readmitAfterMs: 0,
        batch: 1000,
        batchPods: 10_000,
        state,
        log: pino({ level: "silent" }),
      });
      const wallMs = performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      if (inspector) {
        const { profile } = await inspector.post("Profiler.stop");
        writeFileSync(`admission-${name}-${++profiled}.cpuprofile`, JSON.stringify(profile));
        inspector.disconnect();
      }
      return {
        pass: name,
        wallMs,
        cpuMs: (cpu.user + cpu.system) / 1000,
        dryRuns: (await dryRuns()) - runs0,
        considered: r.considered,
        assigned: r.assigned.length,
        skipped: !!r.skipped,
      };
    };
    const out: Timed[] = [];
    await backlog(client, 1, "first-");
    // A job no node can hold: it stays unadmitted, so every later pass has a job to look at.
    await backlog(client, 1, "never-", 1, 16);
    out.push(await pass("cold"));
    await backlog(client, JOBS, "gang-");
    out.push(await pass("1000-jobs"));
    out.push(await pass("after-own"));
    out.push(await pass("unchanged"));
    await submitJob(
      store,
      { name: "bench" },
      {
        name: "one-more",
        queue: leaf(7),
        tasks: [{ name: "w", replicas: 4, resources: { cpu: 4000, memory: "4Gi", gpu: 1 } }],
      },
    );
    out.push(await pass("one-new-job"));
    return out;
  } finally {
    await client.end();
    await db.close();
    await testDb.drop();
  }
}

const all: Timed[][] = [];
for (let i = 0; i < RUNS; i++) all.push(await run());
for (const name of PASSES) {
  const runs = all.map((r) => r.find((t) => t.pass === name)!);
  const row = {
    clusters: CLUSTERS,
    nodes: NODES,
    runningPods: NODES * (GPU_PODS_PER_NODE + CPU_PODS_PER_NODE),
    pass: name,
    wallMs: Math.round(median(runs.map((t) => t.wallMs)) * 10) / 10,
    cpuMs: Math.round(median(runs.map((t) => t.cpuMs)) * 10) / 10,
    dryRuns: runs[0]!.dryRuns,
    considered: runs[0]!.considered,
    assigned: runs[0]!.assigned,
    skipped: runs[0]!.skipped,
  };
  if (opt.json) console.log(JSON.stringify(row));
  else
    console.log(
      `${name.padEnd(12)} ${String(row.wallMs).padStart(9)} ms (cpu ${row.cpuMs} ms)  ${row.dryRuns} dry runs, considered ${row.considered}, assigned ${row.assigned}${row.skipped ? " (skipped)" : ""}`,
    );
}
