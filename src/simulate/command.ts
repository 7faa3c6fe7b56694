// `fleetq simulate PATH... [--json] [--summary]`: run every scenario under the paths,
// print outcomes or PASS/FAIL lines, and exit 0 (all pass), 1 (some fail) or 2 (a file
// is not a valid scenario).
import { dirname, relative } from "node:path";
import { findScenarioFiles, readScenario } from "./files.js";

export { preloadYaml } from "./files.js";
import { runScenario } from "./run.js";
import { ScenarioError } from "./scenario.js";

export interface SimulateOptions {
  json?: boolean;
  summary?: boolean;
}

interface Counts {
  passed: number;
  failed: number;
}

function bump(m: Map<string, Counts>, key: string, ok: boolean): void {
  const c = m.get(key) ?? { passed: 0, failed: 0 };
  if (ok) c.passed++;
  else c.failed++;
  m.set(key, c);
}

export function simulate(
  paths: string[],
  opts: SimulateOptions,
  write: (line: string) => void,
  writeErr: (line: string) => void,
): number {
  let files: { file: string; root: string }[];
  try {
    files = findScenarioFiles(paths);
  } catch (e) {
    if (e instanceof ScenarioError) {
      writeErr(e.message);
      return 2;
    }
    throw e;
  }
  let invalid = false;
  let passed = 0;
  let failed = 0;
  const byDir = new Map<string, Counts>();
  const byTag = new Map<string, Counts>();
  for (const { file, root } of files) {
    let s: ReturnType<typeof readScenario>;
    try {
      s = readScenario(file);
    } catch (e) {
      if (!(e instanceof ScenarioError)) throw e;
      writeErr(`INVALID ${e.message}`);
      invalid = true;
      continue;
    }
    let run: ReturnType<typeof runScenario>;
    try {
      run = runScenario(s, { outcomes: Boolean(opts.json) });
    } catch (e) {
      writeErr(`INVALID ${file}: (run): ${(e as Error).message}`);
      invalid = true;
      continue;
    }
    const ok = run.check ? run.check.passed : true;
    if (ok) passed++;
    else failed++;
    const dir = root === file ? dirname(file) : relative(root, dirname(file)) || ".";
    bump(byDir, dir, ok);
    for (const t of s.features ?? []) bump(byTag, t, ok);
    if (opts.json) {
      write(JSON.stringify({ file, name: s.name, outcomes: run.outcomes, check: run.check }));
      continue;
    }
    if (opts.summary && ok) continue;
    write(`${ok ? "PASS" : "FAIL"} ${s.name} (${file})`);
    if (run.check) for (const f of run.check.failures) write(`    ${f}`);
  }
  if (opts.summary && !opts.json) {
    const line = (k: string, c: Counts) => `${k}: ${c.passed} passed, ${c.failed} failed`;
    for (const [k, c] of [...byDir].sort()) write(`directory ${line(k, c)}`);
    for (const [k, c] of [...byTag].sort()) write(`feature ${line(k, c)}`);
    write(`${passed} passed, ${failed} failed`);
  }
  if (invalid) return 2;
  return failed > 0 ? 1 : 0;
}
