// A usage report over a year of chargeback rollups: hourly rows for --queues queues on --clusters
// clusters (seeded straight into the store, a cluster per operation), then a month's report
// grouped by queue and cluster, read through the store and through the real API over HTTP.
// Medians over --runs, after one run not counted.
//
//   npm run bench:usage -- [--runs 7] [--queues 200] [--clusters 10] [--days 365]
import { parseArgs } from "node:util";
import { createApiServer } from "../src/api/server.js";
import {
  createStore,
  openDatabase,
  planUsageReport,
  seedUsageRollups,
  usageReport,
} from "../src/store/index.js";
import { gql } from "../test/helpers/api.js";
import { createTestDatabase } from "../test/helpers/db.js";
import { TEST_REDIS_URL, testRedisPrefix } from "../test/helpers/redis.js";
import { median } from "./timing.js";

const { values: opt } = parseArgs({
  options: {
    runs: { type: "string", default: "7" },
    queues: { type: "string", default: "200" },
    clusters: { type: "string", default: "10" },
    days: { type: "string", default: "365" },
  },
});
const RUNS = Number(opt.runs);
const QUEUES = Number(opt.queues);
const CLUSTERS = Number(opt.clusters);
const DAYS = Number(opt.days);
for (const [k, v] of Object.entries({ RUNS, QUEUES, CLUSTERS, DAYS }))
  if (!Number.isInteger(v) || v <= 0) throw new Error(`--${k.toLowerCase()} must be a positive integer`);

const FROM = new Date("2026-01-01T00:00:00Z");
const MONTH = { from: "2026-11-01", to: "2026-12-01", groupBy: ["QUEUE", "CLUSTER"] };
const QUERY = `query($from: String!, $to: String!, $groupBy: [UsageGroup!]!) {
  usageReport(from: $from, to: $to, groupBy: $groupBy) {
    queue cluster periodStart periodEnd allocated { gpuHours cpuCoreHours memoryGiBHours } used { gpuHours } cost } }`;

async function timed(f: () => Promise<number>): Promise<{ ms: number; rows: number }> {
  const t0 = performance.now();
  const rows = await f();
  return { ms: performance.now() - t0, rows };
}

async function main(): Promise<void> {
  const testDb = await createTestDatabase();
  const db = await openDatabase(testDb.url);
  const store = createStore(db);
  const queues = Array.from({ length: QUEUES }, (_, i) => `team-${String(i).padStart(3, "0")}`);
  const clusters = Array.from({ length: CLUSTERS }, (_, i) => `cluster-${i}`);
  const seedStart = performance.now();
  let rows = 0;
  for (const c of clusters)
    rows += await seedUsageRollups(store, { queues, clusters: [c], from: FROM, hours: DAYS * 24 });
  const seedSeconds = (performance.now() - seedStart) / 1000;
  console.log(`seeded ${rows} hourly rollups in ${seedSeconds.toFixed(1)} s`);

  const adminToken = `fq_bench_${Date.now()}`;
  const api = await createApiServer({
    databaseUrl: testDb.url,
    redisUrl: TEST_REDIS_URL,
    redisPrefix: testRedisPrefix(),
    port: 0,
    host: "127.0.0.1",
    adminToken,
  });
  try {
    const viaStore = () => usageReport(store, planUsageReport(MONTH), null).then((r) => r.length);
    const viaApi = async () => {
      const r = await gql<{ usageReport: unknown[] }>(api.url, adminToken, QUERY, MONTH);
      if (r.errors) throw new Error(JSON.stringify(r.errors));
      return r.data!.usageReport.length;
    };
    const results: Record<string, { ms: number; rows: number }[]> = { store: [], api: [] };
    for (let i = 0; i <= RUNS; i++) {
      const s = await timed(viaStore);
      const a = await timed(viaApi);
      if (i === 0) continue;
      results.store!.push(s);
      results.api!.push(a);
    }
    for (const [where, runs] of Object.entries(results)) {
      const ms = runs.map((r) => r.ms);
      console.log(
        `${where}: ${runs[0]!.rows} rows, median ${median(ms).toFixed(1)} ms (min ${Math.min(...ms).toFixed(1)}, max ${Math.max(...ms).toFixed(1)}) over ${RUNS} runs`,
      );
    }
  } finally {
    await api.close();
    await db.close();
    await testDb.drop();
  }
}

await main();
