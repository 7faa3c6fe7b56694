// The client package's stand-ins for what runs the control plane: the server commands and
// `token create --admin` need the database, Redis or the scheduling core, which the package leaves
// out; each answers, exit code 3, that it is in the server image and in the repository.
import type { Command } from "commander";
import type { ServerSide } from "../command-tree.js";
import { action } from "../command-context.js";
import { CliError } from "../exit-codes.js";

const SERVER_COMMANDS = ["dev", "serve", "migrate", "worker", "agent", "agent-acl", "demo", "simulate"];

const elsewhere = (what: string) =>
  new CliError(
    `\`fleetq ${what}\` is not in the fleetq client package: it runs with the control plane, ` +
      `from the server image (docker run <image> ${what}) or a checkout of the repository (npx fleetq ${what})`,
  );

export const SERVER_ELSEWHERE: ServerSide = {
  writeAdminToken: async () => {
    throw elsewhere("token create --admin");
  },
  registerCommands(program: Command) {
    for (const name of SERVER_COMMANDS) {
      program
        .command(name, { hidden: true })
        .helpOption(false)
        .allowUnknownOption()
        .allowExcessArguments()
        .action(
          action(() => {
            throw elsewhere(name);
          }),
        );
    }
    program.addHelpText(
      "after",
      `\nThe commands that run the control plane (${SERVER_COMMANDS.join(", ")})\nare in the server image.`,
    );
  },
};
