// The whole `fleetq` command (bin/fleetq.mjs, the server image): the API's commands and those
// that run the control plane.
import type { Command } from "commander";
import { buildCommandTree } from "./command-tree.js";
import { registerAgentAcl } from "./commands/agent-acl.js";
import { registerDemo } from "./commands/demo.js";
import { registerServers } from "./commands/servers.js";
import { registerSimulate } from "./commands/simulate.js";

export function buildProgram(): Command {
  return buildCommandTree({
    writeAdminToken: async (databaseUrl, name) =>
      (await import("./database-admin.js")).createAdminTokenInDatabase(databaseUrl, name),
    registerCommands(program) {
      registerServers(program);
      registerAgentAcl(program);
      registerDemo(program);
      registerSimulate(program);
    },
  });
}
