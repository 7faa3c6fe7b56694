// Finding and reading scenario files (JSON or YAML), sorted by path.
import { readFileSync, readdirSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { extname, join } from "node:path";
import { type Scenario, ScenarioError, validateScenario } from "./scenario.js";

const EXTS = new Set([".json", ".yaml", ".yml"]);

type Yaml = typeof import("yaml");
let yaml: Yaml | undefined;

/** Loads the YAML parser ahead (asynchronously, so a bundle keeps it in a chunk of its own): a run
 * of JSON files never loads it. */
export async function preloadYaml(): Promise<void> {
  // a CommonJS package: bundled, its namespace is the module's `default`
  const m = (await import("yaml")) as Yaml & { default?: Yaml };
  yaml ??= typeof m.parse === "function" ? m : m.default;
}

function parseYaml(text: string): unknown {
  yaml ??= createRequire(import.meta.url)("yaml") as Yaml;
  return yaml.parse(text);
}

/** Scenario files under the given paths: files as given, directories searched recursively. */
export function findScenarioFiles(paths: string[]): { file: string; root: string }[] {
  const out: { file: string; root: string }[] = [];
  for (const p of paths) {
    const st = statSync(p, { throwIfNoEntry: false });
    if (!st) throw new ScenarioError(p, "(path)", "no such file or directory");
    if (st.isFile()) {
      out.push({ file: p, root: p });
      continue;
    }
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
        const f = join(dir, e.name);
        if (e.isDirectory()) walk(f);
        else if (EXTS.has(extname(e.name))) out.push({ file: f, root: p });
      }
    };
    walk(p);
  }
  return out.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
}

export function readScenario(file: string): Scenario {
  const text = readFileSync(file, "utf8");
  let doc: unknown;
  try {
    doc = extname(file) === ".json" ? JSON.parse(text) : parseYaml(text);
  } catch (e) {
    throw new ScenarioError(
      file,
      "(document)",
      `not valid ${extname(file) === ".json" ? "JSON" : "YAML"}: ${(e as Error).message}`,
    );
  }
  return validateScenario(doc, file);
}
