// One `fleetq` server process (serve, worker, agent) of a topology: its JSON log lines as they
// come, a way to wait for one, and the signals a fault sends.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { appendFileSync } from "node:fs";
import path from "node:path";
import { ownChild, tied } from "./services.js";

const ROOT = path.resolve(import.meta.dirname, "../../..");
const KEEP_LINES = 2000;
/** Every process's log lines also go to <dir>/<name>.log when set (to see what happened). */
const logDir = process.env.FLEETQ_TOPOLOGY_LOG_DIR;

export type LogLine = Record<string, unknown> & { msg?: string };

export class FleetqProcess {
  readonly lines: LogLine[] = [];
  stderr = "";
  private readonly watchers = new Set<(line: LogLine) => void>();

  private constructor(
    readonly name: string,
    readonly child: ChildProcess,
  ) {}

  static spawn(name: string, args: string[], env: Record<string, string>): FleetqProcess {
    const [cmd, argv] = tied(process.execPath, [path.join(ROOT, "bin/fleetq.mjs"), ...args]);
    const child = ownChild(
      spawn(cmd, argv, {
        cwd: ROOT,
        env: { ...(process.env as Record<string, string>), FLEETQ_LOG_LEVEL: "info", ...env },
        stdio: ["ignore", "pipe", "pipe"],
      }),
    );
    const proc = new FleetqProcess(name, child);
    let buffered = "";
    child.stdout!.on("data", (d: Buffer) => {
      buffered += d.toString();
      for (let nl = buffered.indexOf("\n"); nl >= 0; nl = buffered.indexOf("\n")) {
        const text = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        let line: LogLine;
        try {
          line = JSON.parse(text) as LogLine;
        } catch {
          line = { msg: text };
        }
        if (logDir) appendFileSync(path.join(logDir, `${name}.log`), `${text}\n`);
        proc.lines.push(line);
        if (proc.lines.length > KEEP_LINES) proc.lines.splice(0, proc.lines.length - KEEP_LINES);
        for (const w of proc.watchers) w(line);
      }
    });
    child.stderr!.on("data", (d: Buffer) => {
      if (logDir) appendFileSync(path.join(logDir, `${name}.log`), d);
      proc.stderr = (proc.stderr + d.toString()).slice(-20_000);
    });
    return proc;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Calls `fn` with every later line until it returns true (then stops watching). */
  watch(fn: (line: LogLine, proc: FleetqProcess) => boolean | undefined): void {
    const w = (line: LogLine) => {
      if (fn(line, this)) this.watchers.delete(w);
    };
    this.watchers.add(w);
  }

  /** The first line (already logged or to come) with this message. */
  waitForLog(msg: string, timeoutMs = 300_000): Promise<LogLine> {
    const seen = this.lines.find((l) => l.msg === msg);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.watchers.delete(w);
        reject(new Error(`${this.name}: no "${msg}" log within ${timeoutMs} ms; stderr: ${this.stderr}`));
      }, timeoutMs);
      const onExit = () => {
        clearTimeout(timer);
        this.watchers.delete(w);
        reject(new Error(`${this.name} exited before logging "${msg}": ${this.stderr}`));
      };
      const w = (line: LogLine) => {
        if (line.msg !== msg) return;
        clearTimeout(timer);
        this.watchers.delete(w);
        this.child.off("exit", onExit);
        resolve(line);
      };
      this.watchers.add(w);
      this.child.once("exit", onExit);
    });
  }

  async kill(signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
    if (!this.running) return;
    const exited = once(this.child, "exit");
    this.child.kill(signal);
    await exited;
  }

  /** SIGTERM, then SIGKILL if it has not stopped in time. */
  async stop(graceMs = 10_000): Promise<void> {
    if (!this.running) return;
    const exited = once(this.child, "exit");
    this.child.kill("SIGTERM");
    const timer = setTimeout(() => this.child.kill("SIGKILL"), graceMs);
    await exited;
    clearTimeout(timer);
  }
}
