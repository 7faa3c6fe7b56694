#!/usr/bin/env node
// The one command-line entry: `fleetq <command>`.
import { Command } from "commander";
import { simulate } from "../simulate/command.js";

const program = new Command();
program.name("fleetq").description("Multi-cluster queueing and admission control for GPU workloads");

program
  .command("simulate")
  .description("run scheduling scenarios (files or directories of JSON/YAML) through the scheduling core")
  .argument("<paths...>", "scenario files or directories")
  .option("--json", "print one JSON document per scenario (JSON Lines)")
  .option("--summary", "print only failures, then counts per directory and feature, then totals")
  .action((paths: string[], opts: { json?: boolean; summary?: boolean }) => {
    const code = simulate(
      paths,
      opts,
      (l) => process.stdout.write(`${l}\n`),
      (l) => process.stderr.write(`${l}\n`),
    );
    process.exitCode = code;
  });

await program.parseAsync(process.argv);
