// Shared by the benchmarks that run the control plane as processes: the API (and workers) in
// processes of their own, a cheap HTTP client on a keep-alive pool for the load generator (and
// GraphQL calls on it), open-loop pacing, quantiles and CPU seconds per process.
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { type Logger, pino } from "pino";
import { TEST_REDIS_URL, testRedisPrefix } from "../test/helpers/redis.js";

export const root = path.resolve(import.meta.dirname, "..");

interface Proc {
  proc: ChildProcess;
  output: string;
}

/** `fleetq <args>` (the compiled CLI) in a process of its own; resolves once `ready` matches its output. */
export function startProcess(
  args: string[],
  env: Record<string, string>,
  ready: RegExp,
): Promise<Proc & { match: RegExpExecArray }> {
  const proc = spawn(process.execPath, [path.join(root, "bin", "fleetq.mjs"), ...args], {
    cwd: root,
    // info: the readiness line is an info log
    env: { ...process.env, NODE_ENV: "production", FLEETQ_LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const p: Proc = { proc, output: "" };
  proc.stderr!.on("data", (d: Buffer) => {
    p.output += d.toString();
  });
  return new Promise((resolve, reject) => {
    proc.stdout!.on("data", (d: Buffer) => {
      p.output += d.toString();
      const m = ready.exec(p.output);
      if (m) resolve({ ...p, match: m });
    });
    proc.once("exit", (code) =>
      reject(new Error(`fleetq ${args.join(" ")} exited with ${code}:\n${p.output}`)),
    );
  });
}

/** The readiness line of `fleetq serve`; its first group is the URL. */
export const API_READY = /"url":"([^"]+)"[^\n]*"msg":"api listening"/;

/** `fleetq serve` on a free port of 127.0.0.1, on the test Redis (its own key prefix). */
export async function startServer(
  databaseUrl: string,
  adminToken: string,
  /** More environment for `fleetq serve` (e.g. FLEETQ_OIDC_*). */
  env: Record<string, string> = {},
): Promise<{ url: string; proc: ChildProcess }> {
  const api = await startProcess(
    ["serve"],
    {
      DATABASE_URL: databaseUrl,
      REDIS_URL: TEST_REDIS_URL,
      FLEETQ_REDIS_PREFIX: testRedisPrefix("fleetq-bench"),
      FLEETQ_PORT: "0",
      FLEETQ_HOST: "127.0.0.1",
      FLEETQ_ADMIN_TOKEN: adminToken,
      // The local Redis has no password: serve refuses it without this.
      FLEETQ_INSECURE_REDIS: "1",
      ...env,
    },
    API_READY,
  );
  return { url: api.match[1]!, proc: api.proc };
}

// node:http with a keep-alive agent: the load generator shares the machine with the server, so it
// should cost as little CPU as it can (fetch costs noticeably more per request).
export const httpAgent = new http.Agent({ keepAlive: true, maxSockets: 256 });

export function post(url: string, body: string, token: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: "POST",
        agent: httpAgent,
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
          authorization: `Bearer ${token}`,
        },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (d: string) => {
          text += d;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** A GraphQL operation's data; its first error is thrown. */
export async function gql<T = Record<string, unknown>>(
  url: string,
  token: string,
  query: string,
  variables: object = {},
): Promise<T> {
  const res = await post(url, JSON.stringify({ query, variables }), token);
  const parsed = JSON.parse(res.text) as { data?: T; errors?: { message: string }[] };
  if (parsed.errors?.length) throw new Error(parsed.errors[0]!.message);
  return parsed.data!;
}

export const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;

/** `rate` calls of `send` per second for `seconds`, open loop: each call leaves on schedule
 * whatever the answers do, and is timed from its scheduled start. Latencies come sorted: of all
 * calls, and of the successful ones (`succeeded`: a quick refusal must not flatter them). */
export async function openLoop(
  rate: number,
  seconds: number,
  send: () => Promise<boolean>,
): Promise<{ sent: number; errors: number; latencies: number[]; succeeded: number[] }> {
  const total = Math.round(rate * seconds);
  const latencies: number[] = [];
  const succeeded: number[] = [];
  let errors = 0;
  const start = performance.now() + 20;
  const inflight: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    inflight.push(
      send().then((ok) => {
        if (!ok) errors++;
        latencies.push(performance.now() - due);
        if (ok) succeeded.push(performance.now() - due);
      }),
    );
  }
  await Promise.all(inflight);
  latencies.sort((a, b) => a - b);
  succeeded.sort((a, b) => a - b);
  return { sent: total, errors, latencies, succeeded };
}

/** CPU seconds (user + system) a process has used so far, from /proc (Linux); null elsewhere. */
export function cpuSeconds(pid: number | undefined): number | null {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
  } catch {
    return null;
  }
}

/** The machine a result was measured on. */
export const machine = () => `${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, Node ${process.version}`;

/** The 1-, 5- and 15-minute load averages, rounded. */
export const loadAverage = () => os.loadavg().map((l) => Number(l.toFixed(2)));

/** Writes a benchmark's summary to bench/results/<name>-<date>.json; returns the file's path. */
export function saveResult(name: string, summary: { date: string }): string {
  const dir = path.join(root, "bench/results");
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}-${summary.date.replace(/[:.]/g, "-")}.json`);
  fs.writeFileSync(file, `${JSON.stringify(summary, null, 2)}\n`);
  return file;
}

/** SIGTERM, and wait for the process to exit. */
export async function stopProcess(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((r) => proc.once("exit", r));
  proc.kill("SIGTERM");
  await exited;
}

/** Creates the top-level queue the benchmarks submit into. */
export async function createQueue(url: string, adminToken: string, name = "bench"): Promise<void> {
  await gql(url, adminToken, `mutation { createQueue(input: { name: "${name}" }) { name } }`);
}

export const ownCpuSeconds = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

/**
 * Registers cluster `name` and reports `nodes` nodes for it through an AGENT token of its own
 * (8 GPUs, 64 CPUs, 512 GiB each, racks of 16), as an agent does.
 */
export async function registerClusterWithNodes(url: string, adminToken: string, name: string, nodes: number) {
  await gql(url, adminToken, `mutation { registerCluster(input: { name: "${name}" }) { name } }`);
  const agent = (await gql(
    url,
    adminToken,
    `mutation { createToken(input: { name: "agent-${name}", role: AGENT, cluster: "${name}" }) { secret } }`,
  )) as { createToken: { secret: string } };
  const reports = Array.from({ length: nodes }, (_, i) => ({
    name: `n${i}`,
    capacity: { cpu: 64_000, memory: "512Gi", gpu: 8 },
    labels: [{ key: "rack", value: `r${i % 16}` }],
  }));
  await gql(
    url,
    agent.createToken.secret,
    `mutation($n: [NodeReport!]!) { reportNodes(cluster: "${name}", nodes: $n, complete: true) }`,
    { n: reports },
  );
}

function getText(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get(url, (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (d: string) => {
          text += d;
        });
        res.on("end", () => resolve(text));
      })
      .on("error", reject);
  });
}

/** Per cluster, the cycles a `fleetq worker` ran that were not skipped (from its /metrics). */
export async function cyclesRun(metricsPort: number): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  const text = await getText(`http://127.0.0.1:${metricsPort}/metrics`);
  for (const m of text.matchAll(/^fleetq_cycles_total\{cluster="([^"]+)",outcome="([^"]+)"\} (\d+)/gm))
    if (m[2] !== "skipped") out.set(m[1]!, (out.get(m[1]!) ?? 0) + Number(m[3]));
  return out;
}

/** `--agent-concurrency`: unset, the agent's backend default (as `fleetq agent` starts it). */
export function agentConcurrency(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new Error("--agent-concurrency must be a positive integer");
  return n;
}

/** An in-process agent's log at the agent's default level, formatted as `fleetq agent` formats it:
 * written nowhere (a process's stdout would be a file) but for warnings and errors, on stderr. */
export const agentLogger = (): Logger =>
  pino(
    { level: "info" },
    pino.multistream([
      { level: "info", stream: pino.destination("/dev/null") },
      { level: "warn", stream: process.stderr },
    ]),
  );
