// `fleetq render job.yaml [--cluster C]`: the Kubernetes objects the agent would create for the
// spec — the job's Service and every pod with its hostname, environment, labels and resources as
// enforced — printed as YAML by the API from the agent's own rendering, submitting nothing.
import type { Command } from "commander";
import { ApiError } from "../client/api-client.js";
import { RENDER_JOB } from "../client/queries.js";
import { action, apiClientOf, print } from "../command-context.js";
import { CliError } from "../exit-codes.js";
import { loadJobSpecs, specFieldOf } from "../job-spec.js";

export function registerRender(program: Command): void {
  program
    .command("render")
    .description("print the Kubernetes objects the agent would create for a job spec (submits nothing)")
    .argument("<file>", 'the job spec ("-" = standard input)')
    .option("-q, --queue <queue>", "the queue (overrides the file's)")
    .option("-c, --cluster <cluster>", "the cluster it would run on")
    .action(
      action(async (file: string, opts: { queue?: string; cluster?: string }, cmd: Command) => {
        const { inputs, workloads } = loadJobSpecs(file, { queue: opts.queue });
        if (workloads)
          throw new CliError(
            `${file}: is a Kubernetes manifest: its controller makes its pods; fleetq render shows the pods of job specs`,
          );
        const client = apiClientOf(cmd);
        const documents: string[] = [];
        for (const [i, input] of inputs.entries()) {
          try {
            const r = await client.request<{ renderJob: string }>(RENDER_JOB, {
              input,
              cluster: opts.cluster ?? null,
            });
            documents.push(r.renderJob);
          } catch (e) {
            if (e instanceof ApiError && e.field?.startsWith("input")) {
              const where = inputs.length > 1 ? `${file}: document ${i + 1}` : file;
              throw new CliError(
                `${where}: field ${specFieldOf(e.field)}: ${e.message.replace(/^input\.[^:]*: /, "")}`,
                e.exitCode,
              );
            }
            throw e;
          }
        }
        print(documents.join("---\n"));
      }),
    );
}
