// One VIEWER sending the heaviest queries the API allows, as fast as it can (a few in flight),
// while submissions arrive at a fixed rate (default 200/s): the submissions' p50 / p99, with and
// without the reader. The queries, each the heaviest of its kind within the cost limit:
// fifteen aliased fairShare fields, a page of jobs with their pods, events and BindRequests,
// every cluster with its nodes, and two jobs of 1,000 pods with 999 pods each.
// Open loop for the submissions, latency from the scheduled send time (as bench:api). The
// reader sends its next query as soon as an answer comes, refused (RATE_LIMITED) or not; with
// --reader-waits it waits the Retry-After of a refusal first, as a well-behaved client does.
// The API runs with its default per-token limits (FLEETQ_API_* in the environment change them;
// FLEETQ_API_RATE=0 FLEETQ_API_CONCURRENCY=0 turn them off for the VIEWER, FLEETQ_API_ADMIN_RATE=0
// FLEETQ_API_ADMIN_CONCURRENCY=0 for the submitting ADMIN).
//
// Before the measurement the API has run each of the reader's queries once (--cold: not). The
// reader runs in a process of its own (--same-process: in the load generator's).
//
//   npm run bench:api-reader -- [--rate 200] [--seconds 10] [--readers 4] [--clusters 3] [--nodes 200] [--jobs 300] [--reader-waits] [--cold] [--same-process]
import { randomBytes } from "node:crypto";
import { fork } from "node:child_process";
import http from "node:http";
import { parseArgs } from "node:util";
import { parse } from "graphql";
import { operationCost } from "../src/api/query-cost.js";
import { buildSchema } from "../src/api/schema.js";
import { createTestDatabase } from "../test/helpers/db.js";
import {
  createQueue,
  gql,
  loadAverage,
  machine,
  openLoop,
  post,
  quantile,
  registerClusterWithNodes,
  startServer,
  stopProcess,
} from "./processes.js";

const { values: opt } = parseArgs({
  options: {
    rate: { type: "string", default: "200" },
    seconds: { type: "string", default: "10" },
    readers: { type: "string", default: "4" },
    clusters: { type: "string", default: "3" },
    nodes: { type: "string", default: "200" },
    jobs: { type: "string", default: "300" },
    "reader-waits": { type: "boolean", default: false },
    cold: { type: "boolean", default: false },
    "same-process": { type: "boolean", default: false },
    /** Internal: this process is the reader (URL and token), stopped by a message. */
    "reader-of": { type: "string" },
  },
});
const RATE = Number(opt.rate);
const SECONDS = Number(opt.seconds);
const READERS = Number(opt.readers);
const CLUSTERS = Number(opt.clusters);
const NODES = Number(opt.nodes);
const JOBS = Number(opt.jobs);
const admin = `fq_bench_${randomBytes(16).toString("hex")}`;

const R = "{ cpu memory gpu gpuMemory }";
/** Queries and their variables. */
const HEAVY: [string, Record<string, unknown>][] = [
  [
    `{ ${Array.from({ length: 15 }, (_, i) => `f${i}: fairShare { queue cluster deserved ${R} fairShare ${R} allocated ${R} requested ${R} limit ${R} }`).join(" ")} }`,
    {},
  ],
  [
    `query($n: Int) { jobs(first: $n) { edges { node { id name state pods { name state node } events { kind message }
    bindRequests { id state } } } } }`,
    { n: 6 },
  ],
  [`{ clusters { name nodes { name capacity ${R} allocated ${R} free ${R} } } }`, {}],
  [
    `query($n: Int) { jobs(filter: { queue: "big" }, first: $n) { edges { node { id pods(first: 999) { name state node } } } } }`,
    { n: 2 },
  ],
];

async function setup(url: string): Promise<string> {
  await createQueue(url, admin);
  await createQueue(url, admin, "big");
  for (let c = 0; c < CLUSTERS; c++) {
    await registerClusterWithNodes(url, admin, `c${c}`, NODES);
  }
  for (let j = 0; j < JOBS; j++) await submit(url, `seed-${j}`);
  for (let j = 0; j < 2; j++) await submit(url, `big-${j}`, "big", 1000);
  return (
    (await gql(
      url,
      admin,
      `mutation { createToken(input: { name: "reader", role: VIEWER }) { secret } }`,
    )) as { createToken: { secret: string } }
  ).createToken.secret;
}

let seq = 0;
/** Failed submissions by HTTP status (0 = no answer). */
const failures = new Map<number, number>();
async function submit(url: string, name = `job-${++seq}`, queue = "bench", replicas = 4): Promise<boolean> {
  const body = JSON.stringify({
    query: "mutation($i: SubmitJobInput!) { submitJob(input: $i) { id } }",
    variables: {
      i: {
        name,
        queue,
        tasks: [{ name: "w", replicas, resources: { cpu: 1000, memory: "4Gi", gpu: 1 } }],
      },
    },
  });
  const res = await post(url, body, admin).catch(() => null);
  const ok = res !== null && res.status === 200 && !res.text.includes('"errors"');
  if (!ok) failures.set(res?.status ?? 0, (failures.get(res?.status ?? 0) ?? 0) + 1);
  return ok;
}

/** The API's event-loop delay since the last scrape (ms): its /metrics (prom-client) resets the
 * delay histogram at each scrape. */
async function loopDelay(url: string) {
  const text = await new Promise<string>((resolve, reject) => {
    http
      .get(
        url.replace(/\/graphql$/, "/metrics"),
        { headers: { authorization: `Bearer ${admin}` } },
        (res) => {
          let body = "";
          res.setEncoding("utf8");
          res.on("data", (d: string) => {
            body += d;
          });
          res.on("end", () => resolve(body));
        },
      )
      .on("error", reject);
  });
  const ms = (name: string) =>
    Number(
      (
        Number(new RegExp(`^fleetq_nodejs_eventloop_lag_${name}_seconds (\\S+)$`, "m").exec(text)?.[1]) * 1000
      ).toFixed(1),
    );
  return { p99Ms: ms("p99"), maxMs: ms("max") };
}

/** Submissions at `RATE` for `SECONDS`: p50 / p99 of the accepted ones from the scheduled send
 * time; the failed ones are counted (by HTTP status), not timed. With the API's event-loop
 * delay meanwhile (p99 and max). */
async function submissions(url: string) {
  failures.clear();
  await loopDelay(url);
  const { sent, errors, succeeded } = await openLoop(RATE, SECONDS, () => submit(url));
  const byStatus = Object.fromEntries(failures);
  const apiEventLoopDelay = await loopDelay(url);
  return {
    p50Ms: quantile(succeeded, 0.5),
    p99Ms: quantile(succeeded, 0.99),
    errors,
    byStatus,
    sent,
    apiEventLoopDelay,
  };
}

/** The reader: READERS queries in flight, round robin over HEAVY, until `stop`. */
function reader(url: string, token: string, stop: { done: boolean }) {
  const counts = { answered: 0, refused: 0, rateLimited: 0 };
  const loop = async (k: number) => {
    for (let i = k; !stop.done; i++) {
      const [query, variables] = HEAVY[i % HEAVY.length]!;
      const res = await post(url, JSON.stringify({ query, variables }), token).catch(() => null);
      if (res && res.status === 200 && !res.text.includes('"errors"')) {
        counts.answered++;
        continue;
      }
      counts.refused++;
      if (res?.status !== 429) continue;
      counts.rateLimited++;
      const wait = Number(/"retryAfter":(\d+)/.exec(res.text)?.[1] ?? 1);
      if (opt["reader-waits"]) await new Promise((r) => setTimeout(r, wait * 1000));
    }
  };
  return { counts, done: Promise.all(Array.from({ length: READERS }, (_, k) => loop(k))) };
}

type Counts = ReturnType<typeof reader>["counts"];

function readerHere(url: string, token: string) {
  const stop = { done: false };
  const r = reader(url, token, stop);
  return {
    started: Promise.resolve(),
    stop: async (): Promise<Counts> => {
      stop.done = true;
      await r.done;
      return r.counts;
    },
  };
}

/** The reader in a process of its own, so that its requests do not delay the submissions'
 * load generator (the machine's cores are still shared). */
function readerProcess(url: string, token: string) {
  const child = fork(import.meta.filename, [...process.argv.slice(2), "--reader-of", `${url} ${token}`], {
    execArgv: process.execArgv,
  });
  const message = <T>() => new Promise<T>((resolve) => child.once("message", (m) => resolve(m as T)));
  const started = message<"started">();
  return {
    started,
    stop: async (): Promise<Counts> => {
      const counts = message<Counts>();
      child.send("stop");
      return counts;
    },
  };
}

async function main() {
  const db = await createTestDatabase();
  const { url, proc } = await startServer(db.url, admin);
  try {
    const viewer = await setup(url);
    await submissions(url); // warm-up
    // The API's first run of a query takes longer (code run for the first time): an API that has
    // been up for a while has run them. --cold leaves them to the measurement.
    if (!opt.cold) for (const [query, variables] of HEAVY) await gql(url, admin, query, variables);
    const alone = await submissions(url);
    const r = opt["same-process"] ? readerHere(url, viewer) : readerProcess(url, viewer);
    await r.started;
    const withReader = await submissions(url);
    const counts = await r.stop();
    const summary = {
      date: new Date().toISOString(),
      machine: machine(),
      rate: RATE,
      seconds: SECONDS,
      clusters: CLUSTERS,
      nodesPerCluster: NODES,
      readerQueryCosts: HEAVY.map(([q, v]) =>
        operationCost(buildSchema(), parse(q), null, v, { clusters: CLUSTERS, largestCluster: NODES }),
      ),
      submitsAlone: alone,
      submitsWithReader: withReader,
      reader: {
        inFlight: READERS,
        waitsRetryAfter: opt["reader-waits"],
        apiRanTheQueriesBefore: !opt.cold,
        ownProcess: !opt["same-process"],
        ...counts,
        perSecond: Number((counts.answered / SECONDS).toFixed(1)),
      },
      loadAverageAtEnd: loadAverage(),
    };
    console.log(JSON.stringify(summary, null, 2));
  } finally {
    await stopProcess(proc);
    await db.drop();
  }
}

if (opt["reader-of"]) {
  const [url, token] = opt["reader-of"].split(" ") as [string, string];
  const stop = { done: false };
  const r = reader(url, token, stop);
  process.once("message", async () => {
    stop.done = true;
    await r.done;
    process.send!(r.counts, () => process.exit(0));
  });
  process.send!("started");
} else await main();
