// `npm start` (fleetq dev) as a child process in its own process group, as a terminal runs it:
// waits for the banner and reads the URL and tokens from it; stop() is Ctrl-C (SIGINT to the group).
import { type ChildProcess, spawn } from "node:child_process";

export interface DevProcess {
  child: ChildProcess;
  baseUrl: string;
  adminToken: string;
  memberToken: string;
  viewerToken: string;
  banner: string;
  output(): { stdout: string; stderr: string };
  /** Ctrl-C to the process group; resolves with how the command (e.g. npm) ended. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export async function startDevProcess(
  command: string[],
  opts: { cwd: string; env: Record<string, string>; timeoutMs?: number },
): Promise<DevProcess> {
  const child = spawn(command[0]!, command.slice(1), {
    cwd: opts.cwd,
    env: opts.env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true, // its own process group, like a terminal's foreground job
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr!.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    // "close": the output pipes closed, so fleetq (npm's grandchild, holding them too) has ended
    child.once("close", (code, signal) => resolve({ code, signal })),
  );
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // the group is gone already
    }
  };
  const deadline = Date.now() + (opts.timeoutMs ?? 240_000);
  while (!stdout.includes("Try it in another terminal")) {
    if (child.exitCode !== null)
      throw new Error(`fleetq dev exited (${child.exitCode}):\n${stdout}\n${stderr}`);
    if (Date.now() > deadline) {
      signalGroup("SIGKILL");
      throw new Error(`fleetq dev did not start in time:\n${stdout}\n${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const banner = stdout;
  const field = (re: RegExp) => {
    const m = re.exec(banner);
    if (!m) throw new Error(`banner without ${re}:\n${banner}`);
    return m[1]!;
  };
  return {
    child,
    banner,
    baseUrl: field(/API\s+(http:\/\/\S+)\/graphql/),
    adminToken: field(/^\s+admin\s+(\S+)/m),
    memberToken: field(/^\s+member\s+(\S+)/m),
    viewerToken: field(/^\s+viewer\s+(\S+)/m),
    output: () => ({ stdout, stderr }),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) signalGroup("SIGINT");
      const timer = setTimeout(() => signalGroup("SIGKILL"), 60_000);
      const ended = await exited;
      clearTimeout(timer);
      return ended;
    },
  };
}
