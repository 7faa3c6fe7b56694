#!/usr/bin/env node
// The one command-line entry: `fleetq <command>` (program.ts). A plain `fleetq simulate` run and
// `fleetq --version` start without loading the command tree (commander and every command's
// module): they are most of what those short runs would otherwise load.
import { plainSimulateArgs, runSimulate } from "./commands/simulate.js";
import { isVersionOnly, projectVersion } from "./paths.js";

const args = process.argv.slice(2);
const simulate = plainSimulateArgs(args);
if (simulate) await runSimulate(simulate.paths, simulate.opts);
else if (isVersionOnly(args)) process.stdout.write(`${projectVersion()}\n`);
else {
  const { buildProgram } = await import("./program.js");
  await buildProgram().parseAsync(process.argv);
}
