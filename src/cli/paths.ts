// Files that ship with the project (examples, package.json), found from this module — whether it
// runs from src/ or compiled in dist/ — not from the working directory.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";

function projectRoot(): string {
  for (let dir = import.meta.dirname; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json"))) return dir;
    if (dirname(dir) === dir) throw new Error(`package.json not found above ${import.meta.dirname}`);
  }
}

export const PROJECT_ROOT = projectRoot();

export const exampleClusterFile = (file: string) => join(PROJECT_ROOT, "examples", "clusters", file);

export function projectVersion(): string {
  return (JSON.parse(readFileSync(join(PROJECT_ROOT, "package.json"), "utf8")) as { version: string })
    .version;
}

/** `fleetq --version` alone: answered without loading the command tree. */
export const isVersionOnly = (args: string[]): boolean =>
  args.length === 1 && (args[0] === "--version" || args[0] === "-V");
