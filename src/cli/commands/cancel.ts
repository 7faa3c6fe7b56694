// `fleetq cancel JOB...`: cancels jobs (running pods are evicted).
import type { Command } from "commander";
import { CANCEL_JOB } from "../client/queries.js";
import type { JobView } from "../client/types.js";
import { action, apiClientOf, print } from "../command-context.js";

export function registerCancel(program: Command): void {
  program
    .command("cancel")
    .description("cancel jobs: pods holding resources are evicted")
    .argument("<jobs...>", "job ids")
    .action(
      action(async (ids: string[], _opts: unknown, cmd: Command) => {
        const client = apiClientOf(cmd);
        for (const id of ids) {
          const { cancelJob } = await client.request<{ cancelJob: JobView }>(CANCEL_JOB, { id });
          print(`job ${cancelJob.name} (${cancelJob.id}) ${cancelJob.state}`);
        }
      }),
    );
}
