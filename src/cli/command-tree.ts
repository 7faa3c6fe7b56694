// The `fleetq` command tree: the commands people and CI pipelines run against the API, and what
// the side that runs the control plane adds (program.ts: the server commands and `token create
// --admin`; the client package, client-main.ts: only where to find them). Global options reach
// every API command (command-context.ts).
import { Command } from "commander";
import { registerCancel } from "./commands/cancel.js";
import { registerFairShare } from "./commands/fairshare.js";
import { registerGet } from "./commands/get.js";
import { registerLogin } from "./commands/login.js";
import { registerLogs } from "./commands/logs.js";
import { registerQueue } from "./commands/queue.js";
import { registerRender } from "./commands/render.js";
import { registerSubmit } from "./commands/submit.js";
import { type AdminTokenWriter, registerToken } from "./commands/token.js";
import { registerRoleBinding } from "./commands/rolebinding.js";
import { registerWait } from "./commands/wait.js";
import { registerWebhook } from "./commands/webhook.js";
import { registerWhatIf } from "./commands/whatif.js";
import { registerUsage } from "./commands/usage.js";
import { registerWhy } from "./commands/why.js";
import { EXIT } from "./exit-codes.js";
import { projectVersion } from "./paths.js";

/** What running the control plane needs beyond the API's commands. */
export interface ServerSide {
  writeAdminToken: AdminTokenWriter;
  /** dev, serve, migrate, worker, agent, agent-acl, demo, simulate */
  registerCommands(program: Command): void;
}

export function buildCommandTree(server: ServerSide): Command {
  const program = new Command();
  program
    .name("fleetq")
    .description("Multi-cluster queueing and admission control for GPU workloads")
    .version(projectVersion(), "-V, --version")
    .option("--url <url>", "the API (default FLEETQ_URL, the config file's url, else http://localhost:4000)")
    .option(
      "--token <token>",
      "the API token (default FLEETQ_TOKEN, the config file's token, else `fleetq login`'s)",
    )
    .option("-o, --output <format>", "table or json (usage: csv too)", "table")
    .addHelpText(
      "after",
      "\nConfiguration: FLEETQ_URL and FLEETQ_TOKEN, or ~/.config/fleetq/config.yaml (url:, token:;\n" +
        "FLEETQ_CONFIG names another file). Exit codes: 0 ok, 1 job failed or cancelled, 2 timed out,\n" +
        "3 rejected (bad input, not found, no permission), 4 API unreachable. Docs: docs/cli.md",
    )
    // Usage errors (unknown option, missing argument) are refusals too.
    .exitOverride((err) => {
      if (err.exitCode === 0) process.exit(0);
      process.exit(
        err.code === "commander.help" || err.code === "commander.helpDisplayed" ? 0 : EXIT.REJECTED,
      );
    });

  // people and CI pipelines
  registerSubmit(program);
  registerGet(program);
  registerFairShare(program);
  registerWhy(program);
  registerCancel(program);
  registerWait(program);
  registerLogs(program);
  registerRender(program);
  registerQueue(program);
  registerToken(program, server.writeAdminToken);
  registerRoleBinding(program);
  registerLogin(program);
  registerWhatIf(program);
  registerUsage(program);
  registerWebhook(program);
  // running the control plane
  server.registerCommands(program);
  return program;
}
