// A command run to its end, its output collected: shared by the tests that run the CLI and the
// image replay.
import { spawn } from "node:child_process";

export interface ShellResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end (no shell unless asked), its output collected; killed past the deadline. */
export function runToEnd(
  command: string,
  args: string[],
  opts: {
    cwd: string;
    env: Record<string, string>;
    timeoutMs: number;
    uid?: number;
    gid?: number;
    /** Called with the child's stderr as it grows. */
    onStderr?: (all: string) => void;
  },
): Promise<ShellResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: opts.cwd,
      env: opts.env,
      uid: opts.uid,
      gid: opts.gid,
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
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(
        new Error(`${command} ${args.join(" ")}: not done in ${opts.timeoutMs} ms\n${stdout}\n${stderr}`),
      );
    }, opts.timeoutMs);
    child.once("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
