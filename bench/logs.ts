// Benchmark of pod logs (not a test), on a local control plane started as users start it: `fleetq
// dev` (embedded database, the local Redis on 127.0.0.1:6379) in a process of its own, the logs
// read through the API from the pod's cluster agent over Redis.
//   1. The first line: a long job (one pod with a pod template) on a demo cluster; timed
//      - `podLogs(job, pod, tailLines: 1)` over HTTP keep-alive from this process, --runs calls
//        after 5 warm-ups (the product's target: p50 ≤ 150 ms);
//      - a `podLogLines(tailLines: 1)` subscription, from its send to its first message, 20 runs:
//        on an open graphql-ws connection, and on a new one as `fleetq logs -f` opens (connect
//        and connection_init included);
//      - the whole `fleetq logs <job>` process (CLI start included), 7 runs, for context.
//   2. A followed stream of 1,000 lines/s: one more simulated cluster whose pods write a line
//      every millisecond (logIntervalSeconds: 0.001), its agent a separate `fleetq agent`
//      process; a job there followed with `podLogLines(tailLines: 0, timestamps: true)` (only the
//      lines written from then on) for --seconds. Each line's lag is its arrival here minus the
//      time at its start (written by the agent, same machine clock). It keeps up when the rate
//      received after the first second is about 1,000/s and the lag does not grow (the lag of
//      the last second against that of the second second). The CPU each process spent in the
//      window says where the cost goes.
// Everything stopped at the end: SIGINT to the agent and to the dev process group, the temp
// folder removed, the Redis keys under this run's prefixes deleted.
//
//   npm run bench:logs                      (--runs 50, --seconds 10, --json)
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { type Client, createClient } from "graphql-ws";
import { Redis } from "ioredis";
import WebSocket from "ws";
import { DEFAULT_REDIS_URL } from "../src/protocol/defaults.js";
import { type DevProcess, startDevProcess } from "../test/e2e/dev-process.js";
import { wsClient } from "../test/helpers/api.js";
import { deleteTestKeys, testRedisPrefix } from "../test/helpers/redis.js";
import { cpuSeconds, gql, httpAgent, ownCpuSeconds, quantile, root } from "./processes.js";
import { median } from "./timing.js";

const { values: args } = parseArgs({
  options: {
    runs: { type: "string", default: "50" },
    seconds: { type: "string", default: "10" },
    json: { type: "boolean", default: false },
  },
});
const RUNS = Number(args.runs);
const SECONDS = Number(args.seconds);
if (!Number.isInteger(RUNS) || RUNS < 1) throw new Error("--runs must be a whole number ≥ 1");
if (!Number.isInteger(SECONDS) || SECONDS < 3) throw new Error("--seconds must be a whole number ≥ 3");
const WARMUPS = 5;
/** Subscriptions per kind (plus 3 warm-ups each). */
const SUBSCRIPTION_RUNS = 20;
/** Back to back, as a user repeats the command. */
const CLI_RUNS = 7;
const BIN = path.join(root, "bin", "fleetq.mjs");
/** The extra cluster of the followed stream: a line every millisecond. */
const FAST = "logs-1k";
const POD = "main-0";

const dir = mkdtempSync(path.join(tmpdir(), "fleetq-bench-logs-"));
const prefix = testRedisPrefix("fleetq-bench-logs");
/** The environment of every fleetq process: default settings (no DATABASE_URL or REDIS_URL), this
 * run's state folder, port and key prefixes, and a config folder of its own for the CLI. */
const baseEnv: Record<string, string> = {
  ...(process.env as Record<string, string>),
  FLEETQ_STATE_DIR: path.join(dir, "state"),
  FLEETQ_PORT: "0",
  FLEETQ_REDIS_PREFIX: prefix,
  FLEETQ_BIND_QUEUE_PREFIX: `${prefix}bind`,
  XDG_CONFIG_HOME: path.join(dir, "config"),
};
for (const k of ["DATABASE_URL", "REDIS_URL", "FLEETQ_CONFIG", "FLEETQ_URL", "FLEETQ_TOKEN"])
  delete baseEnv[k];

const ms = (x: number) => Math.round(x * 10) / 10;
const sleep = (t: number) => new Promise((r) => setTimeout(r, t));
const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { p50: ms(median(s)), p90: ms(quantile(s, 0.9)), min: ms(s[0]!), max: ms(s.at(-1)!) };
};

/** A small CPU-only task with a pod template (its command is the log's first line). */
function jobInput(name: string, durationSeconds: number, cluster?: string) {
  return {
    name,
    queue: "vision",
    ...(cluster ? { cluster } : {}),
    tasks: [
      {
        name: "main",
        replicas: 1,
        resources: { cpu: 500, memory: "512Mi" },
        durationSeconds,
        template: {
          spec: {
            containers: [
              { name: "main", image: "busybox", command: ["sh", "-c", "while true; do date; sleep 1; done"] },
            ],
          },
        },
      },
    ],
  };
}

async function submitRunning(
  url: string,
  token: string,
  input: object,
): Promise<{ id: string; cluster: string }> {
  const { submitJob } = await gql<{ submitJob: { id: string } }>(
    url,
    token,
    "mutation($i: SubmitJobInput!) { submitJob(input: $i) { id } }",
    { i: input },
  );
  for (const deadline = Date.now() + 120_000; Date.now() < deadline; await sleep(100)) {
    const { job } = await gql<{ job: { state: string; cluster: { name: string } | null } }>(
      url,
      token,
      "query($id: ID!) { job(id: $id) { state cluster { name } } }",
      { id: submitJob.id },
    );
    if (job.state === "RUNNING") return { id: submitJob.id, cluster: job.cluster!.name };
    if (job.state === "FAILED" || job.state === "SUCCEEDED")
      throw new Error(`job ${submitJob.id} ended ${job.state}`);
  }
  throw new Error(`job ${submitJob.id} not RUNNING after 120 s`);
}

const POD_LOGS = "query($job: ID!, $pod: String!) { podLogs(job: $job, pod: $pod, tailLines: 1) }";
const POD_LOG_LINES = `subscription($job: ID!, $pod: String!, $tail: Int, $ts: Boolean) {
  podLogLines(job: $job, pod: $pod, tailLines: $tail, timestamps: $ts) { line end } }`;

/** ms from sending the subscription to its first message; then unsubscribed. */
function firstMessage(client: Client, job: string): Promise<number> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const t0 = performance.now();
    const unsubscribe = client.subscribe<{ podLogLines: { line: string; end: string | null } }>(
      { query: POD_LOG_LINES, variables: { job, pod: POD, tail: 1, ts: false } },
      {
        next: (msg) => {
          const t = performance.now() - t0;
          if (settled) return;
          settled = true;
          unsubscribe();
          if (msg.errors?.length || !msg.data?.podLogLines.line)
            reject(new Error(`first message: ${JSON.stringify(msg)}`));
          else resolve(t);
        },
        error: (err) => {
          if (!settled) reject(err instanceof Error ? err : new Error(JSON.stringify(err)));
          settled = true;
        },
        complete: () => {
          if (!settled) reject(new Error("the subscription ended before its first line"));
          settled = true;
        },
      },
    );
  });
}

/** The CLI's environment: the URL and token as the dev banner says to export them. */
const cliEnv = (dev: DevProcess) => ({ ...baseEnv, FLEETQ_URL: dev.baseUrl, FLEETQ_TOKEN: dev.memberToken });

function timeCli(dev: DevProcess, job: string): number {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [BIN, "logs", job], {
    cwd: root,
    env: cliEnv(dev),
    encoding: "utf8",
  });
  const t = performance.now() - t0;
  if (r.status !== 0 || !r.stdout.includes("+ sh -c"))
    throw new Error(`fleetq logs exited ${r.status}: ${r.stderr}`);
  return t;
}

/** `fleetq agent` of the fast cluster in a process of its own; resolves once it runs. */
function startAgent(env: Record<string, string>, clusterFile: string): Promise<ChildProcess> {
  const proc = spawn(
    process.execPath,
    [BIN, "agent", "--cluster", FAST, "--backend", "simulated", "--cluster-file", clusterFile],
    { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] },
  );
  let tail = "";
  const keep = (d: Buffer) => {
    tail = (tail + d.toString()).slice(-20_000); // read on (a full pipe would stall the agent)
  };
  proc.stderr!.on("data", keep);
  return new Promise((resolve, reject) => {
    proc.stdout!.on("data", (d: Buffer) => {
      keep(d);
      if (tail.includes('"msg":"agent running"')) resolve(proc);
    });
    proc.once("exit", (code) => reject(new Error(`fleetq agent exited with ${code}:\n${tail}`)));
  });
}

interface StreamFigures {
  seconds: number;
  /** Lines received per second after the first second. */
  ratePerSecond: number;
  /** Lines written from the first line received to the window's end (one per ms) and received. */
  written: number;
  received: number;
  /** Lines missing between the first and last received (none is lost when 0). */
  gaps: number;
  lagP50Ms: number;
  lagP99Ms: number;
  lagMaxMs: number;
  /** Median lag of the lines received in the second second and in the last. */
  lagSecondSecondMs: number;
  lagLastSecondMs: number;
  /** CPU seconds per 1,000 lines received, per process. */
  cpuPer1000Lines: { dev: number | null; agent: number | null; bench: number };
}

async function followStream(url: string, token: string, job: string, pids: { dev?: number; agent?: number }) {
  const recv: number[] = [];
  const lag: number[] = [];
  const stamps: number[] = [];
  const client = wsClient(url, token);
  const cpu0 = [cpuSeconds(pids.dev), cpuSeconds(pids.agent), ownCpuSeconds()];
  const t0 = Date.now();
  let failure: unknown = null;
  const unsubscribe = client.subscribe<{ podLogLines: { line: string; end: string | null } }>(
    { query: POD_LOG_LINES, variables: { job, pod: POD, tail: 0, ts: true } },
    {
      next: (msg) => {
        const at = Date.now();
        const l = msg.data?.podLogLines;
        if (!l || l.end !== null) {
          failure ??= new Error(`the stream ended early: ${JSON.stringify(msg)}`);
          return;
        }
        const stamp = Date.parse(l.line.slice(0, 24));
        recv.push(at - t0);
        stamps.push(stamp);
        lag.push(at - stamp);
      },
      error: (err) => {
        failure ??= err;
      },
      complete: () => {},
    },
  );
  await sleep(SECONDS * 1000);
  const end = Date.now();
  const cpu1 = [cpuSeconds(pids.dev), cpuSeconds(pids.agent), ownCpuSeconds()];
  unsubscribe();
  await client.dispose();
  if (failure) throw failure instanceof Error ? failure : new Error(JSON.stringify(failure));
  if (!stamps.length) throw new Error("no line received");
  const inSecond = (from: number, to: number) =>
    lag.filter((_, i) => recv[i]! >= from * 1000 && recv[i]! < to * 1000);
  const perK = (i: number) =>
    cpu0[i] == null || cpu1[i] == null
      ? null
      : Math.round(((cpu1[i]! - cpu0[i]!) * 1000 * 1000) / recv.length) / 1000;
  const sortedLag = [...lag].sort((a, b) => a - b);
  return {
    seconds: (end - t0) / 1000,
    ratePerSecond: Math.round(recv.filter((r) => r >= 1000).length / ((end - t0) / 1000 - 1)),
    written: end - stamps[0]! + 1,
    received: recv.length,
    gaps: Math.max(...stamps) - Math.min(...stamps) + 1 - new Set(stamps).size,
    lagP50Ms: median(sortedLag),
    lagP99Ms: quantile(sortedLag, 0.99),
    lagMaxMs: sortedLag.at(-1)!,
    lagSecondSecondMs: median(inSecond(1, 2)),
    lagLastSecondMs: median(inSecond(SECONDS - 1, SECONDS)),
    cpuPer1000Lines: { dev: perK(0), agent: perK(1), bench: perK(2)! },
  } satisfies StreamFigures;
}

let dev: DevProcess | null = null;
let agent: ChildProcess | null = null;
let cleaned: Promise<void> | null = null;

function cleanUp(): Promise<void> {
  cleaned ??= (async () => {
    if (agent && agent.exitCode === null && agent.signalCode === null) {
      const exited = new Promise((r) => agent!.once("exit", r));
      agent.kill("SIGINT");
      const timer = setTimeout(() => agent!.kill("SIGKILL"), 30_000);
      await exited;
      clearTimeout(timer);
    }
    if (dev) await dev.stop();
    httpAgent.destroy();
    rmSync(dir, { recursive: true, force: true });
    const redis = new Redis(DEFAULT_REDIS_URL);
    await deleteTestKeys(prefix, redis)
      .catch((e: Error) => console.error(`could not delete the Redis keys under ${prefix}: ${e.message}`))
      .finally(() => redis.disconnect());
  })();
  return cleaned;
}
process.once("SIGINT", () => {
  console.error("interrupted: stopping everything");
  void cleanUp().finally(() => process.exit(130));
});

async function main() {
  const [load1] = loadavg();
  const t0 = performance.now();
  dev = await startDevProcess([process.execPath, BIN, "dev"], { cwd: root, env: baseEnv });
  const devStartS = (performance.now() - t0) / 1000;
  const url = `http://127.0.0.1:${new URL(dev.baseUrl).port}/graphql`;
  const member = dev.memberToken;
  const progress = (s: string) => {
    if (!args.json) console.error(s);
  };
  progress(`fleetq dev running after ${devStartS.toFixed(1)} s at ${dev.baseUrl}`);

  // 1. The first line.
  const long = await submitRunning(url, member, jobInput("logs-long", 3600));
  progress(`job ${long.id} running on ${long.cluster}`);
  const podLogs = async () => {
    const t = performance.now();
    const { podLogs: text } = await gql<{ podLogs: string }>(url, member, POD_LOGS, {
      job: long.id,
      pod: POD,
    });
    const elapsed = performance.now() - t;
    if (!text.endsWith("\n") || text.split("\n").length !== 2)
      throw new Error(`podLogs: ${JSON.stringify(text)}`);
    return elapsed;
  };
  for (let i = 0; i < WARMUPS; i++) await podLogs();
  const httpTimes: number[] = [];
  for (let i = 0; i < RUNS; i++) httpTimes.push(await podLogs());

  // On a connection opened (and acknowledged) before the clock starts.
  const open = createClient({
    url: url.replace(/^http/, "ws"),
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${member}` },
    retryAttempts: 0,
    lazy: false,
  });
  await new Promise<void>((resolve, reject) => {
    open.on("connected", () => resolve());
    open.on("error", reject);
  });
  for (let i = 0; i < 3; i++) await firstMessage(open, long.id);
  const subOpen: number[] = [];
  for (let i = 0; i < SUBSCRIPTION_RUNS; i++) subOpen.push(await firstMessage(open, long.id));
  await open.dispose();
  // A new connection each time, as `fleetq logs -f` makes.
  const subNew: number[] = [];
  for (let i = 0; i < SUBSCRIPTION_RUNS + 3; i++) {
    const client = wsClient(url, member);
    const t = await firstMessage(client, long.id);
    await client.dispose();
    if (i >= 3) subNew.push(t);
  }
  const cliTimes: number[] = [];
  for (let i = 0; i <= CLI_RUNS; i++) {
    const t = timeCli(dev, long.id);
    if (i > 0) cliTimes.push(t); // the first warms the file cache
  }

  // 2. A followed stream of 1,000 lines/s from a cluster of its own.
  await gql(url, dev.adminToken, "mutation($n: String!) { registerCluster(input: { name: $n }) { name } }", {
    n: FAST,
  });
  const { createToken } = await gql<{ createToken: { secret: string } }>(
    url,
    dev.adminToken,
    "mutation($n: String!, $c: String!) { createToken(input: { name: $n, role: AGENT, cluster: $c }) { secret } }",
    { n: `agent-${FAST}`, c: FAST },
  );
  mkdirSync(path.join(dir, "clusters"));
  const clusterFile = path.join(dir, "clusters", `${FAST}.yaml`);
  writeFileSync(
    clusterFile,
    [
      `name: ${FAST}`,
      "logIntervalSeconds: 0.001",
      "nodeGroups:",
      "  - { name: cpu, count: 2, cpu: 32, memory: 128Gi }",
      "",
    ].join("\n"),
  );
  agent = await startAgent(
    {
      ...baseEnv,
      FLEETQ_API_URL: url,
      FLEETQ_AGENT_TOKEN: createToken.secret,
      FLEETQ_REDIS_URL: DEFAULT_REDIS_URL,
    },
    clusterFile,
  );
  for (const deadline = Date.now() + 60_000; ; await sleep(100)) {
    const { cluster } = await gql<{ cluster: { state: string } | null }>(
      url,
      dev.adminToken,
      "query($n: String!) { cluster(name: $n) { state } }",
      { n: FAST },
    );
    if (cluster?.state === "READY") break;
    if (Date.now() > deadline) throw new Error(`cluster ${FAST} not READY after 60 s`);
  }
  const fast = await submitRunning(url, member, jobInput("logs-fast", SECONDS + 30, FAST));
  progress(`job ${fast.id} running on ${fast.cluster}; following it for ${SECONDS} s`);
  const stream = await followStream(url, member, fast.id, { dev: dev.child.pid, agent: agent.pid });

  const figures = {
    date: new Date().toISOString(),
    loadAverageAtStart: Number(load1!.toFixed(2)),
    loadAverageAtEnd: Number(loadavg()[0]!.toFixed(2)),
    devStartSeconds: Number(devStartS.toFixed(1)),
    firstLine: {
      podLogsHttpMs: { runs: RUNS, ...stats(httpTimes) },
      subscriptionOpenConnectionMs: { runs: SUBSCRIPTION_RUNS, ...stats(subOpen) },
      subscriptionNewConnectionMs: { runs: SUBSCRIPTION_RUNS, ...stats(subNew) },
      cliMs: {
        runs: CLI_RUNS,
        median: ms(median(cliTimes)),
        min: ms(Math.min(...cliTimes)),
        max: ms(Math.max(...cliTimes)),
      },
    },
    stream: stream as StreamFigures,
  };
  if (args.json) {
    console.log(JSON.stringify(figures));
    return;
  }
  const f = figures.firstLine;
  const s = figures.stream;
  const rows: [string, string][] = [
    [
      `podLogs(tailLines: 1) over HTTP, ${RUNS} calls`,
      `p50 ${f.podLogsHttpMs.p50} ms, p90 ${f.podLogsHttpMs.p90} ms (target p50 ≤ 150 ms)`,
    ],
    [
      `podLogLines to first message, open connection`,
      `p50 ${f.subscriptionOpenConnectionMs.p50} ms, p90 ${f.subscriptionOpenConnectionMs.p90} ms`,
    ],
    [
      `podLogLines to first message, new connection`,
      `p50 ${f.subscriptionNewConnectionMs.p50} ms, p90 ${f.subscriptionNewConnectionMs.p90} ms`,
    ],
    [
      `fleetq logs <job>, whole process`,
      `median ${f.cliMs.median} ms (min ${f.cliMs.min}, max ${f.cliMs.max})`,
    ],
    [`followed 1,000 lines/s: received after 1st s`, `${s.ratePerSecond} lines/s`],
    [
      `lines written / received in ${s.seconds.toFixed(1)} s`,
      `${s.written} / ${s.received} (gaps ${s.gaps})`,
    ],
    [`lag per line`, `p50 ${s.lagP50Ms} ms, p99 ${s.lagP99Ms} ms, max ${s.lagMaxMs} ms`],
    [`lag (median) 2nd second / last second`, `${s.lagSecondSecondMs} ms / ${s.lagLastSecondMs} ms`],
    [
      `CPU per 1,000 lines: dev / agent / this`,
      `${s.cpuPer1000Lines.dev ?? "?"} / ${s.cpuPer1000Lines.agent ?? "?"} / ${s.cpuPer1000Lines.bench} s`,
    ],
  ];
  for (const [k, v] of rows) console.log(`${k.padEnd(48)} ${v}`);
  console.log(`load average ${figures.loadAverageAtStart} at start, ${figures.loadAverageAtEnd} at end`);
}

try {
  await main();
} finally {
  await cleanUp();
}
