// `fleetq simulate <paths...>`: scheduling scenarios through the core (src/simulate).
import type { Command } from "commander";

export interface SimulateFlags {
  json?: boolean;
  summary?: boolean;
}

type SimulateModule = typeof import("../../simulate/command.js");

/** The simulate bundle's file name, beside the compiled CLI's files. */
export const SIMULATE_BUNDLE = "simulate.cjs";

/**
 * The simulate code, loaded when run (the core is not needed by the other commands): the compiled
 * CLI has it as one prebuilt bundle with V8's code cache beside its own files (scripts/build.mjs),
 * which starts faster than compiling its modules; from the sources it is imported.
 */
async function simulateModule(): Promise<SimulateModule> {
  if (import.meta.url.endsWith(".js")) {
    const { loadBundle } = await import("../cached-bundle.js");
    const bundled = loadBundle<SimulateModule>(new URL(SIMULATE_BUNDLE, import.meta.url));
    if (bundled) return bundled;
  }
  return await import("../../simulate/command.js");
}

/** Runs the scenarios and sets the exit code (0 all pass, 1 some fail, 2 a file is not valid). */
export async function runSimulate(paths: string[], opts: SimulateFlags): Promise<void> {
  const { preloadYaml, simulate } = await simulateModule();
  if (!paths.every((p) => p.endsWith(".json"))) await preloadYaml();
  process.exitCode = simulate(
    paths,
    opts,
    (l) => process.stdout.write(`${l}\n`),
    (l) => process.stderr.write(`${l}\n`),
  );
}

/**
 * The arguments after `fleetq` when they are a plain `simulate` run (paths, `--json`,
 * `--summary`), which main.ts then starts without building the command tree; anything else
 * (help, other options, no path) is null and goes through the command tree as usual.
 */
export function plainSimulateArgs(args: string[]): { paths: string[]; opts: SimulateFlags } | null {
  if (args[0] !== "simulate") return null;
  const paths: string[] = [];
  const opts: SimulateFlags = {};
  for (const a of args.slice(1)) {
    if (a === "--json") opts.json = true;
    else if (a === "--summary") opts.summary = true;
    else if (a.startsWith("-") || a === "") return null;
    else paths.push(a);
  }
  return paths.length ? { paths, opts } : null;
}

export function registerSimulate(program: Command): void {
  program
    .command("simulate")
    .description("run scheduling scenarios (files or directories of JSON/YAML) through the scheduling core")
    .argument("<paths...>", "scenario files or directories")
    .option("--json", "print one JSON document per scenario (JSON Lines)")
    .option("--summary", "print only failures, then counts per directory and feature, then totals")
    .action((paths: string[], opts: SimulateFlags) => runSimulate(paths, opts));
}
