// Shared by the end-to-end benchmarks: the API and workers as their own processes, a GraphQL
// client on a keep-alive pool, and CPU seconds per process.
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");

interface Proc {
  proc: ChildProcess;
  output: string;
}

export function startProcess(
  script: string,
  env: Record<string, string>,
  ready: RegExp,
): Promise<Proc & { match: RegExpExecArray }> {
  const proc = spawn(process.execPath, ["--import", "tsx", script], {
    cwd: root,
    env: { ...process.env, NODE_ENV: "production", FLEETQ_LOG_LEVEL: "warn", ...env },
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
    proc.once("exit", (code) => reject(new Error(`${script} exited with ${code}:\n${p.output}`)));
  });
}

export const httpAgent = new http.Agent({ keepAlive: true, maxSockets: 256 });

export function gql<T = Record<string, unknown>>(
  url: string,
  token: string,
  query: string,
  variables: object = {},
): Promise<T> {
  const body = JSON.stringify({ query, variables });
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
        res.on("end", () => {
          const parsed = JSON.parse(text) as { data?: T; errors?: { message: string }[] };
          if (parsed.errors?.length) reject(new Error(parsed.errors[0]!.message));
          else resolve(parsed.data!);
        });
      },
    );
    req.on("error", reject);
    req.end(body);
  });
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

export const ownCpuSeconds = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
