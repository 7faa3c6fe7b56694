#!/usr/bin/env node
// The one command-line entry: `fleetq <command>` (program.ts).
import { buildProgram } from "./program.js";

await buildProgram().parseAsync(process.argv);
