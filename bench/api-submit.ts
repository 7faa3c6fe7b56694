// submitJob over HTTP against a local API server (its own process, real PostgreSQL and Redis):
//  1. latency at a fixed rate (default 200 submissions/s): p50 / p99, the median over --runs runs;
//  2. the highest rate held with p99 <= 100 ms (rising steps; median over the runs);
//  3. latency at the fixed rate with a person's OIDC access token (an in-process OpenID provider
//     signs it; the API verifies it through discovery and JWKS, then remembers it).
// Open loop: requests leave on schedule whatever the answers do, and latency is measured from
// the scheduled send time (a slow server cannot hide its queueing from the figures).
//
//   npm run bench:api -- [--runs 3] [--rate 200] [--seconds 10] [--step-seconds 5] [--rows static,oidc]
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { createTestDatabase } from "../test/helpers/db.js";
import { startOidcProvider } from "../test/helpers/oidc-provider.js";
import {
  cpuSeconds,
  createQueue,
  loadAverage,
  machine,
  openLoop,
  post,
  quantile,
  saveResult,
  startServer,
  stopProcess,
} from "./processes.js";
import { median } from "./timing.js";

const { values: opt } = parseArgs({
  options: {
    runs: { type: "string", default: "3" },
    rate: { type: "string", default: "200" },
    seconds: { type: "string", default: "10" },
    "step-seconds": { type: "string", default: "5" },
    "p99-limit": { type: "string", default: "100" },
    rows: { type: "string", default: "static,oidc" },
  },
});
const ROWS = new Set(opt.rows.split(","));
const RUNS = Number(opt.runs);
const RATE = Number(opt.rate);
const SECONDS = Number(opt.seconds);
const STEP_SECONDS = Number(opt["step-seconds"]);
const P99_LIMIT = Number(opt["p99-limit"]);
const STEPS = [50, 100, 150, 200, 300, 400, 500, 600, 800, 1000, 1200, 1500, 2000];

const adminToken = `fq_bench_${randomBytes(16).toString("hex")}`;

const SUBMIT = "mutation($i: SubmitJobInput!) { submitJob(input: $i) { id state } }";
let seq = 0;
/** A few distinct error messages, shown at the end (a run with errors does not count as held). */
const firstErrors = new Set<string>();

async function submit(url: string, token = adminToken): Promise<boolean> {
  const n = ++seq;
  const body = JSON.stringify({
    query: SUBMIT,
    variables: {
      i: {
        name: `job-${n}`,
        queue: "bench",
        idempotencyKey: `k-${n}`,
        tasks: [{ name: "worker", replicas: 4, resources: { cpu: 1000, memory: "4Gi", gpu: 1 } }],
      },
    },
  });
  try {
    const res = await post(url, body, token);
    const parsed = JSON.parse(res.text) as { errors?: { message: string }[] };
    if (parsed.errors && firstErrors.size < 5) firstErrors.add(parsed.errors[0]?.message ?? "?");
    return res.status === 200 && !parsed.errors;
  } catch (e) {
    if (firstErrors.size < 5) firstErrors.add(String(e));
    return false;
  }
}

interface Step {
  rate: number;
  sent: number;
  errors: number;
  p50: number;
  p99: number;
  max: number;
}

/** `rate` submissions per second for `seconds`, each timed from its scheduled start. */
async function fixedRate(url: string, rate: number, seconds: number, token = adminToken): Promise<Step> {
  const { sent, errors, latencies } = await openLoop(rate, seconds, () => submit(url, token));
  return {
    rate,
    sent,
    errors,
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    max: latencies.at(-1) ?? 0,
  };
}

const fmt = (s: Step) =>
  `${s.rate}/s: p50 ${s.p50.toFixed(1)} ms, p99 ${s.p99.toFixed(1)} ms, max ${s.max.toFixed(1)} ms, ${s.errors} errors of ${s.sent}`;

async function main() {
  const staticRow = ROWS.has("static") ? await staticTokens() : null;
  const oidcRow = ROWS.has("oidc") ? await oidcTokens() : null;
  const summary = { date: new Date().toISOString(), machine: machine(), ...staticRow, oidc: oidcRow };
  if (firstErrors.size) console.log(`errors seen: ${[...firstErrors].join(" | ")}`);
  console.log(JSON.stringify(summary, null, 2));
  saveResult("api-submit", summary);
}

/** The fixed rate with a person's OIDC access token. Their group is bound to ADMIN, as the static
 * row's token is: the two rows differ only in how the bearer is authenticated. */
async function oidcTokens() {
  const idp = await startOidcProvider({
    accounts: { bencher: { email: "bencher@example.com", groups: ["bench"] } },
    accessTokenTTL: 3600,
  });
  const db = await createTestDatabase();
  const { url, proc } = await startServer(db.url, adminToken, {
    FLEETQ_OIDC_ISSUER: idp.issuer,
    FLEETQ_OIDC_AUDIENCE: idp.audience,
  });
  try {
    await createQueue(url, adminToken);
    await post(
      url,
      JSON.stringify({
        query: `mutation { createRoleBinding(input: { group: "bench", role: ADMIN }) { id } }`,
      }),
      adminToken,
    );
    const token = await idp.accessToken("bencher");
    await fixedRate(url, 100, 3, token); // warm-up, and the first verification (discovery, JWKS)
    const runs: Step[] = [];
    for (let run = 1; run <= RUNS; run++) {
      runs.push(await fixedRate(url, RATE, SECONDS, token));
      console.log(`oidc run ${run}: ${fmt(runs.at(-1)!)}`);
    }
    return {
      rate: RATE,
      seconds: SECONDS,
      p50Ms: median(runs.map((s) => s.p50)),
      p99Ms: median(runs.map((s) => s.p99)),
      errors: runs.reduce((n, s) => n + s.errors, 0),
    };
  } finally {
    await stopProcess(proc);
    await db.drop();
    await idp.close();
  }
}

async function staticTokens() {
  const db = await createTestDatabase();
  const { url, proc } = await startServer(db.url, adminToken);
  try {
    await createQueue(url, adminToken);
    await fixedRate(url, 100, 3); // warm-up: JIT, prepared statements, pools

    const fixed: Step[] = [];
    const held: number[] = [];
    const cpuPerSubmit: number[] = [];
    for (let run = 1; run <= RUNS; run++) {
      const cpuBefore = cpuSeconds(proc.pid!);
      const s = await fixedRate(url, RATE, SECONDS);
      const cpuAfter = cpuSeconds(proc.pid!);
      fixed.push(s);
      if (cpuBefore !== null && cpuAfter !== null)
        cpuPerSubmit.push(((cpuAfter - cpuBefore) * 1000) / s.sent);
      console.log(
        `run ${run}: ${fmt(s)}; server CPU ${cpuPerSubmit.at(-1)?.toFixed(2) ?? "?"} ms per submission`,
      );
      let best = 0;
      for (const rate of STEPS) {
        const step = await fixedRate(url, rate, STEP_SECONDS);
        const ok = step.errors === 0 && step.p99 <= P99_LIMIT;
        console.log(`  step ${fmt(step)} ${ok ? "held" : "not held"}`);
        if (!ok) break;
        best = rate;
      }
      held.push(best);
    }
    const summary = {
      date: new Date().toISOString(),
      machine: machine(),
      runs: RUNS,
      fixedRate: {
        rate: RATE,
        seconds: SECONDS,
        p50Ms: median(fixed.map((s) => s.p50)),
        p99Ms: median(fixed.map((s) => s.p99)),
        errors: fixed.reduce((n, s) => n + s.errors, 0),
      },
      serverCpuMsPerSubmission: cpuPerSubmit.length ? median(cpuPerSubmit) : null,
      loadAverageAtEnd: loadAverage(),
      highestRateWithP99UnderLimit: {
        limitMs: P99_LIMIT,
        stepSeconds: STEP_SECONDS,
        perRun: held,
        median: median(held),
      },
      jobs: await countJobs(db.url),
    };
    return summary;
  } finally {
    await stopProcess(proc);
    await db.drop();
  }
}

async function countJobs(url: string): Promise<number> {
  const pg = (await import("pg")).default;
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return Number((await c.query("SELECT count(*) FROM job")).rows[0].count);
  } finally {
    await c.end();
  }
}

await main();
