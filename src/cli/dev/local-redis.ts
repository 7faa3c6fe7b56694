// Redis for `fleetq dev`: REDIS_URL if set; else one answering on 127.0.0.1:6379; else a
// redis-server from PATH started on a free port with its data in the state folder (stopped with
// dev); else an error that says how to get one.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { delimiter, join } from "node:path";
import { Redis } from "ioredis";
import { DEFAULT_REDIS_URL } from "../../protocol/defaults.js";
import { CliError, EXIT } from "../exit-codes.js";

export interface LocalRedis {
  url: string;
  /** How it was found: "env" (REDIS_URL), "existing" (6379 answered), "started" (our child). */
  source: "env" | "existing" | "started";
  stop(): Promise<void>;
}

export const DEFAULT_LOCAL_REDIS = DEFAULT_REDIS_URL;

/** PING within `timeoutMs`; never throws. */
export async function redisAnswers(url: string, timeoutMs = 3000): Promise<boolean> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  client.on("error", () => {});
  try {
    await client.connect();
    return (await client.ping()) === "PONG";
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

export function findOnPath(command: string, path = process.env.PATH ?? ""): string | null {
  for (const dir of path.split(delimiter)) {
    if (dir && existsSync(join(dir, command))) return join(dir, command);
  }
  return null;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export const NO_REDIS_MESSAGE = [
  "fleetq dev needs Redis, and found none:",
  "  - REDIS_URL is not set,",
  "  - nothing answers PING on 127.0.0.1:6379,",
  "  - redis-server is not on PATH.",
  "Get one of these, then run `npm start` again:",
  "  Debian/Ubuntu:  sudo apt-get install -y redis-server    (starts one on 6379; or fleetq starts it)",
  "  macOS:          brew install redis",
  "  Docker:         docker run -d --name fleetq-redis -p 6379:6379 redis:7",
  "  elsewhere:      REDIS_URL=redis://HOST:PORT npm start",
].join("\n");

export interface LocalRedisOptions {
  env?: NodeJS.ProcessEnv;
  /** Where a started redis-server keeps its files. */
  stateDir: string;
  /** Probed before starting one (default 127.0.0.1:6379). */
  probeUrl?: string;
}

export async function localRedis(opts: LocalRedisOptions): Promise<LocalRedis> {
  const env = opts.env ?? process.env;
  const none = async () => {};
  if (env.REDIS_URL) return { url: env.REDIS_URL, source: "env", stop: none };
  const probe = opts.probeUrl ?? DEFAULT_LOCAL_REDIS;
  if (await redisAnswers(probe)) return { url: probe, source: "existing", stop: none };
  const binary = findOnPath("redis-server", env.PATH);
  if (!binary) throw new CliError(NO_REDIS_MESSAGE, EXIT.UNAVAILABLE);
  return startRedisServer(binary, join(opts.stateDir, "redis"));
}

/** A redis-server an earlier `fleetq dev` started and could not stop (it was killed): reuse it. */
async function adoptLeftover(dir: string): Promise<LocalRedis | null> {
  const file = join(dir, "fleetq-dev-redis.json");
  if (!existsSync(file)) return null;
  try {
    const { pid, port } = JSON.parse(readFileSync(file, "utf8")) as { pid: number; port: number };
    const url = `redis://127.0.0.1:${port}`;
    process.kill(pid, 0);
    if (await redisAnswers(url, 500)) {
      return {
        url,
        source: "started",
        stop: async () => {
          process.kill(pid, "SIGTERM");
          rmSync(file, { force: true });
        },
      };
    }
  } catch {
    // not running any more
  }
  rmSync(file, { force: true });
  return null;
}

async function startRedisServer(binary: string, dir: string): Promise<LocalRedis> {
  mkdirSync(dir, { recursive: true });
  const leftover = await adoptLeftover(dir);
  if (leftover) return leftover;
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  // Snapshots in the state folder: a restarted `fleetq dev` finds its queues again.
  const child: ChildProcess = spawn(
    binary,
    [
      ...["--bind", "127.0.0.1", "--port", String(port), "--dir", dir, "--logfile", join(dir, "redis.log")],
      ...["--save", "60 1", "--appendonly", "no"],
    ],
    // Its own process group: a terminal's Ctrl-C reaches fleetq, which stops Redis last.
    { stdio: "ignore", detached: true },
  );
  const pidFile = join(dir, "fleetq-dev-redis.json");
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const deadline = Date.now() + 10_000;
  while (!(await redisAnswers(url, 300))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL");
      const log = existsSync(join(dir, "redis.log"))
        ? readFileSync(join(dir, "redis.log"), "utf8").slice(-1500)
        : "";
      throw new CliError(
        `redis-server (${binary}) did not start on port ${port}: ${log.trim() || "no log"}`,
        EXIT.UNAVAILABLE,
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  writeFileSync(pidFile, JSON.stringify({ pid: child.pid, port }));
  return {
    url,
    source: "started",
    stop: async () => {
      rmSync(pidFile, { force: true });
      if (child.exitCode !== null) return;
      child.kill("SIGTERM"); // redis-server saves its snapshot and exits on SIGTERM
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}
