// `fleetq serve` and `fleetq worker` refuse a Redis that accepts connections without a password
// (whoever writes there reaches the agents' queues), start with --insecure-redis or
// FLEETQ_INSECURE_REDIS=1, and start against a Redis that needs a password. The protected Redis is
// this test's own redis-server on a free port: the shared one stays as it is. Needs dist/
// (node scripts/build.mjs).
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, until } from "../cli/run-cli.js";
import { createTestDatabase, type TestDatabase } from "../helpers/db.js";
import { TEST_REDIS_URL } from "../helpers/redis.js";
import { probeRedis } from "../../src/cli/servers/redis-check.js";

const PASSWORD = "a-redis-password-for-this-test";
const BIND_SECRET = "a-bind-secret-for-this-test";
let db: TestDatabase;
let redis: ChildProcess;
let protectedUrl = "";
const children: ChildProcess[] = [];

async function freePort(): Promise<number> {
  const server = createServer().listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

beforeAll(async () => {
  db = await createTestDatabase({ migrate: true });
  const port = await freePort();
  redis = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--requirepass", PASSWORD],
    {
      stdio: "ignore",
    },
  );
  protectedUrl = `redis://:${PASSWORD}@127.0.0.1:${port}`;
  await until(
    async () => (await probeRedis(protectedUrl)) === "protected",
    "the test's own redis-server",
    30_000,
  );
});

afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
  redis?.kill("SIGKILL");
  await db?.drop();
});

/** Starts the command and resolves with the first log line saying it runs, or its exit. */
function start(args: string[], env: Record<string, string>, ready: string) {
  const child = spawn(process.execPath, [path.join(ROOT, "bin/fleetq.mjs"), ...args], {
    cwd: ROOT,
    env: {
      ...(process.env as Record<string, string>),
      DATABASE_URL: db.url,
      FLEETQ_INSECURE_REDIS: "",
      FLEETQ_BIND_SECRET: "",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let out = "";
  let err = "";
  child.stdout!.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr!.on("data", (d: Buffer) => {
    err += d.toString();
  });
  return new Promise<{ started: boolean; code: number | null; stdout: string; stderr: string }>((resolve) => {
    const timer = setInterval(() => {
      if (out.includes(`"msg":"${ready}"`)) {
        clearInterval(timer);
        child.kill("SIGTERM");
        resolve({ started: true, code: null, stdout: out, stderr: err });
      }
    }, 50);
    child.once("exit", (code) => {
      clearInterval(timer);
      resolve({ started: out.includes(`"msg":"${ready}"`), code, stdout: out, stderr: err });
    });
  });
}

const serve = ["serve", "--port", "0", "--host", "127.0.0.1"];
const worker = ["worker", "--metrics-port", "0"];

describe.each([
  ["serve", serve, "api listening"],
  ["worker", worker, "workers running"],
] as const)("fleetq %s and Redis's access", (_name, args, ready) => {
  it("refuses a Redis that answers without a password, naming it and the way out", async () => {
    const r = await start([...args], { REDIS_URL: TEST_REDIS_URL }, ready);
    expect(r.started).toBe(false);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("accepts connections without a password");
    expect(r.stderr).toContain("--insecure-redis");
  });

  it("starts against that Redis with --insecure-redis, and with FLEETQ_INSECURE_REDIS=1", async () => {
    const flag = await start([...args, "--insecure-redis"], { REDIS_URL: TEST_REDIS_URL }, ready);
    expect(flag.started, flag.stderr).toBe(true);
    expect(flag.stdout).toContain("redis accepts connections without a password (--insecure-redis)");
    const env = await start([...args], { REDIS_URL: TEST_REDIS_URL, FLEETQ_INSECURE_REDIS: "1" }, ready);
    expect(env.started, env.stderr).toBe(true);
  });

  it("starts against a Redis that needs a password, and never logs the password", async () => {
    const env = { REDIS_URL: protectedUrl, FLEETQ_REDIS_PREFIX: "fleetq-redis-open:" };
    const r = await start([...args], { ...env, FLEETQ_BIND_SECRET: BIND_SECRET }, ready);
    expect(r.started, r.stderr).toBe(true);
    expect(r.stdout + r.stderr).not.toContain(PASSWORD);
    expect(r.stdout + r.stderr).not.toContain(BIND_SECRET);
    // The secret the agents' bind requests are signed with is the operator's to set.
    const unsigned = await start([...args], env, ready);
    expect(unsigned.started).toBe(false);
    expect(unsigned.stderr).toContain("FLEETQ_BIND_SECRET is not set");
  });
});

it("the probe tells an open Redis from one that needs a password", async () => {
  expect(await probeRedis(TEST_REDIS_URL)).toBe("open");
  expect(await probeRedis(protectedUrl)).toBe("protected");
});
