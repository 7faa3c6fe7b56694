// A redis-server of a test's own, on a free port: for tests that change its users or settings
// (ACL users, a password), which must never touch the shared Redis.
import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { Redis } from "ioredis";

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface OwnRedis {
  /** redis://127.0.0.1:<port>, as the default user (with its password when one is set). */
  url: string;
  port: number;
  stop(): void;
}

/** Starts redis-server (no persistence); `password` makes the default user require it. */
export async function startRedisServer(opts: { password?: string } = {}): Promise<OwnRedis> {
  const port = await freePort();
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"];
  if (opts.password) args.push("--requirepass", opts.password);
  const child: ChildProcess = spawn("redis-server", args, { stdio: "ignore" });
  const url = `redis://${opts.password ? `:${opts.password}@` : ""}127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on("error", () => {}); // not up yet: tried again
    try {
      await probe.connect();
      await probe.ping();
      probe.disconnect();
      return { url, port, stop: () => child.kill() };
    } catch {
      probe.disconnect();
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  child.kill();
  throw new Error("redis-server did not start");
}
