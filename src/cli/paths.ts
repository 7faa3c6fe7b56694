// Files that ship with the project (examples), found from this module, not the working directory.
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

export const exampleClusterFile = (file: string) => join(PROJECT_ROOT, "examples", "clusters", file);

export function projectVersion(): string {
  return (JSON.parse(readFileSync(join(PROJECT_ROOT, "package.json"), "utf8")) as { version: string })
    .version;
}
