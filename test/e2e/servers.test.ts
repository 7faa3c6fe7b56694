// The control plane as separate processes, the way docker compose runs it: migrations
// (`npm run db:migrate`), the first ADMIN token (`fleetq token create --admin`), `fleetq serve`,
// `fleetq worker`, `fleetq demo`, and a simulated `fleetq agent` — then a CI-style
// `fleetq submit --wait`. Real PostgreSQL and Redis; every process logs JSON lines and stops
// cleanly on SIGTERM.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { reserveTestDatabase, type TestDatabase } from "../helpers/db.js";
import { TEST_REDIS_URL, testRedisPrefix } from "../helpers/redis.js";
import { deleteTestKeys } from "../helpers/redis.js";
import { ROOT, runCli, until } from "../cli/run-cli.js";
import { tempDir } from "../helpers/temp-dir.js";

interface Server {
  child: ChildProcess;
  lines: Record<string, unknown>[];
  stderr: string;
  exited: Promise<number | null>;
}

let db: TestDatabase;
const servers: Server[] = [];
const prefix = testRedisPrefix("fleetq-servers");
const env: Record<string, string> = {};

function startServer(args: string[], extraEnv: Record<string, string> = {}): Server {
  const child = spawn(process.execPath, [path.join(ROOT, "bin/fleetq.mjs"), ...args], {
    cwd: ROOT,
    env: { ...(process.env as Record<string, string>), ...env, ...extraEnv },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const server: Server = {
    child,
    lines: [],
    stderr: "",
    exited: new Promise((resolve) => child.once("exit", (code) => resolve(code))),
  };
  let buffered = "";
  child.stdout!.on("data", (d: Buffer) => {
    buffered += d.toString();
    for (let nl = buffered.indexOf("\n"); nl >= 0; nl = buffered.indexOf("\n")) {
      // structured logs: every line is one JSON object
      server.lines.push(JSON.parse(buffered.slice(0, nl)));
      buffered = buffered.slice(nl + 1);
    }
  });
  child.stderr!.on("data", (d: Buffer) => {
    server.stderr += d.toString();
  });
  servers.push(server);
  return server;
}

const logged = (s: Server, msg: string) =>
  until(async () => {
    if (s.child.exitCode !== null) throw new Error(`exited ${s.child.exitCode}: ${s.stderr}`);
    return s.lines.find((l) => l.msg === msg);
  }, `log "${msg}"`);

beforeAll(() => {
  db = reserveTestDatabase();
  Object.assign(env, {
    DATABASE_URL: db.url,
    REDIS_URL: TEST_REDIS_URL,
    FLEETQ_REDIS_PREFIX: prefix,
    FLEETQ_BIND_QUEUE_PREFIX: `${prefix}bind`,
    FLEETQ_LOG_LEVEL: "info",
    // The tests' Redis has no password: serve and worker refuse it without this.
    FLEETQ_INSECURE_REDIS: "1",
  });
});

afterAll(async () => {
  for (const s of servers) if (s.child.exitCode === null) s.child.kill("SIGKILL");
  await db.drop();
  await deleteTestKeys(prefix);
});

it("migrate, bootstrap token, serve, worker, demo, agent; a job submitted with --wait succeeds", async () => {
  execFileSync("npm", ["run", "-s", "db:migrate"], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: "ignore",
  });

  const bootstrap = await runCli(["token", "create", "--admin", "--name", "ops"], { env });
  expect(bootstrap.code, bootstrap.stderr).toBe(0);
  const admin = bootstrap.stdout.trim();

  const api = startServer(["serve", "--port", "0", "--host", "127.0.0.1"]);
  const url = ((await logged(api, "api listening")) as { url: string }).url.replace(/\/graphql$/, "");
  const worker = startServer(["worker", "--metrics-port", "0"]);
  const metricsPort = ((await logged(worker, "workers running")) as { metricsPort: number }).metricsPort;

  const tokens = tempDir("fleetq-tokens", "test");
  const demo = await runCli(["demo", "--tokens-dir", tokens], { url, token: admin });
  expect(demo.code, demo.stderr).toBe(0);
  expect(demo.stdout).toContain("7 queue(s), 3 cluster(s) and 5 token(s) created");
  // idempotent: a second run creates nothing
  expect((await runCli(["demo", "--tokens-dir", tokens], { url, token: admin })).stdout).toContain(
    "0 queue(s), 0 cluster(s) and 0 token(s) created",
  );

  const agent = startServer(
    [
      "agent",
      "--cluster=a100-small",
      "--backend=simulated",
      "--cluster-file=examples/clusters/a100-small.yaml",
      `--token-file=${path.join(tokens, "agent-a100-small.token")}`,
    ],
    { FLEETQ_API_URL: `${url}/graphql`, FLEETQ_REDIS_URL: TEST_REDIS_URL },
  );
  await logged(agent, "agent running");

  const spec = path.join(tokens, "job.yaml");
  writeFileSync(
    spec,
    'name: ci-job\nqueue: vision\ncluster: a100-small\ntasks:\n  - name: t\n    replicas: 2\n    resources: { cpu: "4", memory: 16Gi, gpu: 1 }\n    durationSeconds: 2\n',
  );
  const member = (await import("node:fs"))
    .readFileSync(path.join(tokens, "demo-member.token"), "utf8")
    .trim();
  const submitted = await runCli(["submit", spec, "--wait", "--timeout", "5m"], { url, token: member });
  expect(submitted.stderr).toContain("SUCCEEDED");
  expect(submitted.code).toBe(0);

  // operations endpoints of each process
  expect((await fetch(`${url}/healthz`)).status).toBe(200);
  expect((await fetch(`${url}/readyz`)).status).toBe(200);
  expect(await (await fetch(`${url}/`)).text()).toContain('<script type="module" src="/dashboard/app.js">');
  expect((await fetch(`${url}/metrics`)).status).toBe(401); // a token is needed
  const apiMetrics = await (
    await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${member}` } })
  ).text();
  expect(apiMetrics).toMatch(
    /fleetq_queue_allocated\{queue="vision",cluster="a100-small",resource="gpu"\} \d/,
  );
  expect(apiMetrics).toMatch(/fleetq_bind_latency_seconds_count\{cluster="a100-small"\} [1-9]/);
  expect((await fetch(`http://127.0.0.1:${metricsPort}/healthz`)).status).toBe(200);
  const workerMetrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  expect(workerMetrics).toMatch(
    /fleetq_cycle_duration_seconds_count\{cluster="a100-small",outcome="\w+"\} \d+/,
  );

  // SIGTERM: each stops cleanly, exit code 0
  for (const s of [agent, worker, api]) {
    s.child.kill("SIGTERM");
    expect(await s.exited, s.stderr).toBe(0);
    expect(s.lines.some((l) => l.msg === "stopped")).toBe(true);
  }
}, 600_000);
