// Runs the real `fleetq` command (bin/fleetq.mjs) as a child process, the way people and CI
// pipelines do, with a config folder of its own so the user's ~/.config/fleetq never leaks in.
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

export const ROOT = path.resolve(import.meta.dirname, "../..");
const isolatedConfigHome = mkdtempSync(path.join(tmpdir(), "fleetq-cli-config-"));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  url?: string;
  token?: string | null;
  env?: Record<string, string>;
  cwd?: string;
  /** Called with the child's stderr as it grows (e.g. to act once a job was submitted). */
  onStderr?: (all: string) => void;
  timeoutMs?: number;
}

export function runCli(args: string[], opts: CliOptions = {}): Promise<CliResult> {
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    XDG_CONFIG_HOME: isolatedConfigHome,
    FLEETQ_URL: opts.url ?? "",
    FLEETQ_TOKEN: opts.token ?? "",
    ...opts.env,
  };
  delete env.FLEETQ_CONFIG;
  const child = spawn(process.execPath, [path.join(ROOT, "bin/fleetq.mjs"), ...args], {
    cwd: opts.cwd ?? ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
    opts.onStderr?.(stderr);
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(
        new Error(`fleetq ${args.join(" ")} did not finish in time\nstdout: ${stdout}\nstderr: ${stderr}`),
      );
    }, opts.timeoutMs ?? 120_000);
    child.once("error", reject);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Polls until `check` returns a value (no timing assertions: a generous deadline only). */
export async function until<T>(
  check: () => Promise<T | undefined | null | false>,
  what: string,
  timeoutMs = 120_000,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
