// Runs the real `fleetq` command (bin/fleetq.mjs) as a child process, the way people and CI
// pipelines do, with a config folder of its own so the user's ~/.config/fleetq never leaks in.
import path from "node:path";
import { runToEnd, type ShellResult } from "../helpers/run-to-end.js";
import { tempDir } from "../helpers/temp-dir.js";

export const ROOT = path.resolve(import.meta.dirname, "../..");
const isolatedConfigHome = tempDir("fleetq-cli-config");

export type CliResult = ShellResult;

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
  return runToEnd(process.execPath, [path.join(ROOT, "bin/fleetq.mjs"), ...args], {
    cwd: opts.cwd ?? ROOT,
    env,
    timeoutMs: opts.timeoutMs ?? 120_000,
    onStderr: opts.onStderr,
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
