// The state folder of `fleetq dev` (FLEETQ_STATE_DIR, default ./.data, gitignored): the embedded
// database, a Redis it started, the demo's token files — and a lock so that two `fleetq dev`
// never open the same embedded database.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { CliError } from "../exit-codes.js";

export function stateDir(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(env.FLEETQ_STATE_DIR || ".data");
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Takes the folder's lock; returns its release. */
export function lockStateDir(dir: string): () => void {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "fleetq-dev.pid");
  if (existsSync(file)) {
    const pid = Number(readFileSync(file, "utf8").trim());
    if (Number.isInteger(pid) && pid !== process.pid && alive(pid)) {
      throw new CliError(
        `another fleetq dev (pid ${pid}) is using ${dir}: stop it first, or give this one its own folder with FLEETQ_STATE_DIR`,
      );
    }
  }
  writeFileSync(file, String(process.pid));
  return () => {
    if (existsSync(file) && readFileSync(file, "utf8").trim() === String(process.pid))
      rmSync(file, { force: true });
  };
}
