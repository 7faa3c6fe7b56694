// `fleetq simulate <paths...>`: scheduling scenarios through the core (src/simulate).
import type { Command } from "commander";

export function registerSimulate(program: Command): void {
  program
    .command("simulate")
    .description("run scheduling scenarios (files or directories of JSON/YAML) through the scheduling core")
    .argument("<paths...>", "scenario files or directories")
    .option("--json", "print one JSON document per scenario (JSON Lines)")
    .option("--summary", "print only failures, then counts per directory and feature, then totals")
    .action(async (paths: string[], opts: { json?: boolean; summary?: boolean }) => {
      // loaded when run: the core is not needed by the other commands
      const { preloadYaml, simulate } = await import("../../simulate/command.js");
      if (!paths.every((p) => p.endsWith(".json"))) await preloadYaml();
      const code = simulate(
        paths,
        opts,
        (l) => process.stdout.write(`${l}\n`),
        (l) => process.stderr.write(`${l}\n`),
      );
      process.exitCode = code;
    });
}
