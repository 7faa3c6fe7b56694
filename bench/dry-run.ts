// Dry runs of submissions at fleet scale: the API (in this process) answering dryRunSubmit over
// HTTP on clusters of 1,000 nodes (8 GPUs, 128 CPUs, 1 TiB) each running 25,000 pods (6,000
// one-GPU, 19,000 one-CPU, in jobs of 5), 200 leaf queues under 4 departments, seeded with bulk
// SQL (bench/seed-fleet.ts) on a fresh database per run. Timed queries:
//   cold          the API's first dry run: every cluster read in full, admission's bases built
//   fits-now      a gang of 4 one-GPU pods (it fits now: starts in the next cycle)
//   whole-nodes   a gang of 2 pods of 8 GPUs (no node is free: admission's reasons, the estimator
//                 on the runners-up within the budget)
//   ten-jobs      dryRunSubmitJobs of 10 gangs of 4 one-GPU pods
//   after-submit  fits-now after a real submit and the cycle placing it (the clusters' changes
//                 read, not the clusters)
// Figures: medians over --runs fresh fleets × --repeat queries of each warm kind.
//
//   npm run bench:dry-run -- [--runs 2] [--repeat 5] [--clusters 10] [--nodes 1000] [--json]
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import pg from "pg";
import { createApiServer } from "../src/api/server.js";
import { defaultSchedulerConfig, runSession } from "../src/core/index.js";
import { commitSession, createStore, loadSnapshot, openDatabase, submitJob } from "../src/store/index.js";
import { createTestDatabase } from "../test/helpers/db.js";
import { TEST_REDIS_URL, testRedisPrefix } from "../test/helpers/redis.js";
import { leaf, seedFleet } from "./seed-fleet.js";
import { median } from "./timing.js";

const { values: opt } = parseArgs({
  options: {
    runs: { type: "string", default: "2" },
    repeat: { type: "string", default: "5" },
    clusters: { type: "string", default: "10" },
    nodes: { type: "string", default: "1000" },
    json: { type: "boolean", default: false },
  },
});
const RUNS = Number(opt.runs);
const REPEAT = Number(opt.repeat);
const CLUSTERS = Number(opt.clusters);
const NODES = Number(opt.nodes);
for (const [k, v] of Object.entries({ runs: RUNS, repeat: REPEAT, clusters: CLUSTERS, nodes: NODES }))
  if (!Number.isInteger(v) || v <= 0) throw new Error(`--${k} must be a positive integer`);
if (CLUSTERS > 100) throw new Error("--clusters must be at most 100");

const KINDS = ["cold", "fits-now", "whole-nodes", "ten-jobs", "after-submit"] as const;
type Kind = (typeof KINDS)[number];

const FIELDS =
  "cluster tier message estimatedStart clusters { cluster estimated } evictions { job pods now }";
const ONE = `query($input: SubmitJobInput!) { dryRunSubmit(input: $input) { ${FIELDS} } }`;
const MANY = `query($inputs: [SubmitJobInput!]!) { dryRunSubmitJobs(inputs: $inputs) { ${FIELDS} } }`;

const gang = (name: string, replicas: number, gpu: number, i = 7) => ({
  name,
  queue: leaf(i),
  tasks: [{ name: "w", replicas, resources: { cpu: 4000, memory: "4Gi", gpu } }],
});

interface Sample {
  kind: Kind;
  ms: number;
  answer: string;
}

async function run(): Promise<Sample[]> {
  const testDb = await createTestDatabase();
  const client = new pg.Client({ connectionString: testDb.url });
  await client.connect();
  const db = await openDatabase(testDb.url);
  const store = createStore(db);
  const adminToken = `fq_bench_${randomBytes(16).toString("hex")}`;
  try {
    await seedFleet(client, CLUSTERS, NODES);
    const api = await createApiServer({
      store,
      redisUrl: TEST_REDIS_URL,
      redisPrefix: testRedisPrefix("fleetq-bench-dry-run"),
      port: 0,
      host: "127.0.0.1",
      adminToken,
    });
    const ask = async (kind: Kind, query: string, variables: Record<string, unknown>): Promise<Sample> => {
      const t0 = performance.now();
      const res = await fetch(api.url, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${adminToken}` },
        body: JSON.stringify({ query, variables }),
      });
      const body = (await res.json()) as { data?: Record<string, unknown>; errors?: unknown };
      const ms = performance.now() - t0;
      if (body.errors) throw new Error(`${kind}: ${JSON.stringify(body.errors)}`);
      return { kind, ms, answer: summary(Object.values(body.data!)[0]) };
    };
    try {
      const out: Sample[] = [await ask("cold", ONE, { input: gang("cold", 4, 1) })];
      for (let i = 0; i < REPEAT; i++) {
        out.push(await ask("fits-now", ONE, { input: gang(`f-${i}`, 4, 1) }));
        out.push(await ask("whole-nodes", ONE, { input: gang(`w-${i}`, 2, 8) }));
        out.push(
          await ask("ten-jobs", MANY, {
            inputs: Array.from({ length: 10 }, (_, k) => gang(`t-${i}-${k}`, 4, 1, k)),
          }),
        );
        await submitAndPlace(store, i);
        out.push(await ask("after-submit", ONE, { input: gang(`a-${i}`, 4, 1) }));
      }
      return out;
    } finally {
      await api.close();
    }
  } finally {
    await client.end();
    await db.close();
    await testDb.drop();
  }
}

/** A real job on c00, placed by a cycle: the fleet changed between two dry runs. */
async function submitAndPlace(store: ReturnType<typeof createStore>, i: number): Promise<void> {
  await submitJob(store, { name: "bench" }, { ...gang(`real-${i}`, 4, 1), cluster: "c00" });
  const { snapshot, generation, rows } = await loadSnapshot(store, "c00");
  await commitSession(store, "c00", generation, runSession(snapshot, defaultSchedulerConfig()), rows);
}

/** What the answer said, briefly (the first run's is printed with the figures). */
function summary(data: unknown): string {
  const list = (Array.isArray(data) ? data : [data]) as {
    cluster: string | null;
    tier: number | null;
    estimatedStart: string | null;
    clusters: { estimated: boolean }[];
    evictions: unknown[];
  }[];
  const a = list[0]!;
  const estimated = a.clusters.filter((c) => c.estimated).length;
  return `${list.length} answer(s); first: ${a.cluster ?? "no cluster"}${a.tier ? ` tier ${a.tier}` : ""}, start ${a.estimatedStart ? "known" : "unknown"}, ${estimated} cluster(s) estimated, ${a.evictions.length} eviction(s)`;
}

const all: Sample[] = [];
for (let r = 0; r < RUNS; r++) all.push(...(await run()));
for (const kind of KINDS) {
  const samples = all.filter((s) => s.kind === kind);
  const row = {
    clusters: CLUSTERS,
    nodes: NODES,
    runningPods: NODES * 25 * CLUSTERS,
    kind,
    medianMs: Math.round(median(samples.map((s) => s.ms))),
    maxMs: Math.round(Math.max(...samples.map((s) => s.ms))),
    samples: samples.length,
    answer: samples[0]!.answer,
  };
  if (opt.json) console.log(JSON.stringify(row));
  else
    console.log(
      `${kind.padEnd(13)} ${String(row.medianMs).padStart(6)} ms median, ${row.maxMs} ms max (${row.samples} samples)  ${row.answer}`,
    );
}
process.exit(0);
