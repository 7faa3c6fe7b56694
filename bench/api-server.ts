// What the API benchmarks share: the API server in its own process (real PostgreSQL and Redis)
// and a cheap HTTP client for the load generator.
import { type ChildProcess, spawn } from "node:child_process";
import http from "node:http";
import path from "node:path";
import { TEST_REDIS_URL, testRedisPrefix } from "../test/helpers/redis.js";

export const root = path.resolve(import.meta.dirname, "..");

export async function startServer(
  databaseUrl: string,
  adminToken: string,
): Promise<{ url: string; proc: ChildProcess }> {
  const proc = spawn(process.execPath, [path.join(root, "bin", "fleetq.mjs"), "serve"], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      REDIS_URL: TEST_REDIS_URL,
      FLEETQ_REDIS_PREFIX: testRedisPrefix("fleetq-bench"),
      FLEETQ_PORT: "0",
      FLEETQ_HOST: "127.0.0.1",
      FLEETQ_ADMIN_TOKEN: adminToken,
      NODE_ENV: "production",
      FLEETQ_LOG_LEVEL: "info", // the readiness line is an info log
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    proc.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /"url":"([^"]+)"[^\n]*"msg":"api listening"/.exec(out);
      if (m) resolve(m[1]!);
    });
    proc.once("exit", (code) => reject(new Error(`server exited with ${code}`)));
  });
  return { url, proc };
}

// node:http with a keep-alive agent: the load generator shares the machine with the server, so it
// should cost as little CPU as it can (fetch costs noticeably more per request).
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

export function post(url: string, body: string, token: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: "POST",
        agent,
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

export const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;

/** `rate` calls of `send` per second for `seconds`, open loop: each call leaves on schedule
 * whatever the answers do, and is timed from its scheduled start. Latencies come sorted. */
export async function openLoop(
  rate: number,
  seconds: number,
  send: () => Promise<boolean>,
): Promise<{ sent: number; errors: number; latencies: number[] }> {
  const total = Math.round(rate * seconds);
  const latencies: number[] = [];
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
      }),
    );
  }
  await Promise.all(inflight);
  latencies.sort((a, b) => a - b);
  return { sent: total, errors, latencies };
}
