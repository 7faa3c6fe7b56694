// How long single heavy queries keep the API's event loop: the API in this process (per-token
// limits off), each query sent alone, one at a time; for each, its cost (query-cost.ts), the
// event loop's busy time per query (median) and the longest stretch it was blocked (largest
// event-loop delay seen while the query ran, median and max over the runs, and in the server's
// first run of the query, which is not counted in the others). The data: clusters
// with nodes reported by their agents, jobs of 4 pods, and (newest) jobs of 1,000 pods. The
// queries are the heaviest of their kind within the cost limit.
//
//   npm run bench:api-query-weight -- [--runs 8] [--clusters 3] [--nodes 200] [--jobs 300] [--big-jobs 2]
import { randomBytes } from "node:crypto";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { parse } from "graphql";
import { operationCost } from "../src/api/query-cost.js";
import { buildSchema } from "../src/api/schema.js";
import { createApiServer } from "../src/api/server.js";
import { fleetSize } from "../src/store/index.js";
import { createTestDatabase } from "../test/helpers/db.js";
import { TEST_REDIS_URL, testRedisPrefix } from "../test/helpers/redis.js";
import {
  createQueue,
  gql,
  loadAverage,
  machine,
  post,
  quantile,
  registerClusterWithNodes,
} from "./processes.js";

const { values: opt } = parseArgs({
  options: {
    runs: { type: "string", default: "8" },
    clusters: { type: "string", default: "3" },
    nodes: { type: "string", default: "200" },
    jobs: { type: "string", default: "300" },
    "big-jobs": { type: "string", default: "2" },
  },
});
const RUNS = Number(opt.runs);
const admin = `fq_bench_${randomBytes(16).toString("hex")}`;
const R = "{ cpu memory gpu gpuMemory }";
const off = { burst: 0, perSecond: 0, concurrent: 0 };

const db = await createTestDatabase();
const server = await createApiServer({
  databaseUrl: db.url,
  redisUrl: TEST_REDIS_URL,
  redisPrefix: testRedisPrefix("fleetq-bench"),
  port: 0,
  host: "127.0.0.1",
  adminToken: admin,
  rateLimits: { user: off, admin: off, agent: off },
});
const url = server.url;
try {
  await createQueue(url, admin);
  for (let c = 0; c < Number(opt.clusters); c++) {
    await registerClusterWithNodes(url, admin, `c${c}`, Number(opt.nodes));
  }
  const submit = async (name: string, replicas: number) =>
    (
      (await gql(url, admin, "mutation($i: SubmitJobInput!) { submitJob(input: $i) { id } }", {
        i: { name, queue: "bench", tasks: [{ name: "w", replicas, resources: { cpu: 1, memory: "1Mi" } }] },
      })) as { submitJob: { id: string } }
    ).submitJob.id;
  for (let j = 0; j < Number(opt.jobs); j++) await submit(`seed-${j}`, 4);
  const BIG = Number(opt["big-jobs"]);
  let big = "";
  for (let j = 0; j < BIG; j++) big = await submit(`big-${j}`, 1000);
  const viewer = (
    (await gql(
      url,
      admin,
      `mutation { createToken(input: { name: "reader", role: VIEWER }) { secret } }`,
    )) as {
      createToken: { secret: string };
    }
  ).createToken.secret;

  const JOB = `id name state priority minMember createdAt startedAt finishedAt submittedBy namespace
    queue { name } cluster { name } labels { key value } pendingReason { message }`;
  const queries: Record<string, [string, Record<string, unknown>]> = {
    "fifteen aliased fairShare": [
      `{ ${Array.from({ length: 15 }, (_, i) => `f${i}: fairShare { queue cluster deserved ${R} fairShare ${R} allocated ${R} requested ${R} limit ${R} }`).join(" ")} }`,
      {},
    ],
    "jobs(first: 6) with pods, events, BindRequests (100 each)": [
      `query($n: Int) { jobs(first: $n) { edges { node { id name state pods { name state node } events { kind message } bindRequests { id state } } } } }`,
      { n: 6 },
    ],
    "jobs(first: 500), 15 fields each": [
      `query($n: Int) { jobs(first: $n) { edges { node { ${JOB} } } } }`,
      { n: 500 },
    ],
    "clusters with nodes": [
      `{ clusters { name nodes { name capacity ${R} allocated ${R} free ${R} } } }`,
      {},
    ],
    "one job's pods(first: 1000)": [
      `query($id: ID!) { job(id: $id) { pods(first: 1000) { name state node } } }`,
      { id: big },
    ],
    "jobs(first: 2) with pods(first: 999)": [
      `query($n: Int) { jobs(first: $n) { edges { node { id pods(first: 999) { name state node } } } } }`,
      { n: 2 },
    ],
  };
  const fleet = await fleetSize(server.store);
  const schema = buildSchema();
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const rows = [];
  for (const [name, [query, variables]] of Object.entries(queries)) {
    const busy: number[] = [];
    const stalls: number[] = [];
    let bytes = 0;
    let firstStall = 0;
    for (let i = 0; i <= RUNS; i++) {
      delay.reset();
      const before = performance.eventLoopUtilization();
      const res = await post(url, JSON.stringify({ query, variables }), viewer);
      const used = performance.eventLoopUtilization(before);
      if (res.status !== 200 || res.text.includes('"errors"'))
        throw new Error(`${name}: ${res.text.slice(0, 300)}`);
      bytes = res.text.length;
      if (i === 0) {
        firstStall = delay.max / 1e6; // the server's first run of the query (cold code paths)
        continue;
      }
      busy.push(used.active);
      stalls.push(delay.max / 1e6);
    }
    busy.sort((a, b) => a - b);
    stalls.sort((a, b) => a - b);
    rows.push({
      query: name,
      cost: operationCost(schema, parse(query), null, variables, fleet),
      responseKiB: Math.round(bytes / 1024),
      busyMsMedian: Number(quantile(busy, 0.5).toFixed(1)),
      longestStallMsMedian: Number(quantile(stalls, 0.5).toFixed(1)),
      longestStallMsMax: Number(stalls.at(-1)!.toFixed(1)),
      firstRunStallMs: Number(firstStall.toFixed(1)),
    });
  }
  console.log(
    JSON.stringify(
      {
        date: new Date().toISOString(),
        machine: machine(),
        runs: RUNS,
        queries: rows,
        loadAverageAtEnd: loadAverage(),
      },
      null,
      2,
    ),
  );
} finally {
  await server.close();
  await db.drop();
}
