// `fleetq why JOB`: why a job is pending — the reason per cluster considered, and which
// resources it is short of there.
import type { Command } from "commander";
import { GET_JOB } from "../client/queries.js";
import type { JobDetail } from "../client/types.js";
import { action, apiClientOf, outputFormat, print, printJson } from "../command-context.js";
import { CliError } from "../exit-codes.js";
import { estimatedStartView, pendingReasonView } from "../output/job-views.js";

export function registerWhy(program: Command): void {
  program
    .command("why")
    .description("why a job is pending: the reason per cluster and resource")
    .argument("<job>", "the job id")
    .action(
      action(async (id: string, _opts: unknown, cmd: Command) => {
        const { job } = await apiClientOf(cmd).request<{ job: JobDetail | null }>(GET_JOB, { id });
        if (!job) throw new CliError(`job ${id} not found`);
        if (outputFormat(cmd) === "json")
          return printJson({
            id: job.id,
            state: job.state,
            pendingReason: job.pendingReason,
            estimatedStart: job.estimatedStart ?? null,
            estimatedCluster: job.estimatedCluster ?? null,
          });
        if (job.state !== "PENDING") {
          const where = job.cluster ? ` on cluster ${job.cluster.name}` : "";
          const failed = job.pods.filter((p) => p.state === "FAILED" && p.message);
          print(`Job ${job.name} (${job.id}) is ${job.state}${where}, not pending.`);
          for (const p of failed.slice(0, 5)) print(`  pod ${p.name} failed: ${p.message}`);
          return;
        }
        print(`Job ${job.name} (${job.id}) in queue ${job.queue.name} is PENDING.`);
        print(
          job.pendingReason
            ? pendingReasonView(job.pendingReason)
            : "Pending: no reason recorded yet (the scheduler has not looked at it)",
        );
        print(`Expected to start: ${estimatedStartView(job)}`);
      }),
    );
}
