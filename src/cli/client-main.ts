#!/usr/bin/env node
// The client package's `fleetq` (packages/cli, bundled by scripts/build.mjs with every package it
// uses): the commands run against an API, for people and CI pipelines. The commands that run the
// control plane are not in it: they answer where they are (commands/server-elsewhere.ts).
import { isVersionOnly, projectVersion } from "./paths.js";

const args = process.argv.slice(2);
if (isVersionOnly(args)) process.stdout.write(`${projectVersion()}\n`);
else {
  const { buildCommandTree } = await import("./command-tree.js");
  const { SERVER_ELSEWHERE } = await import("./commands/server-elsewhere.js");
  await buildCommandTree(SERVER_ELSEWHERE).parseAsync(process.argv);
}
