// `fleetq usage --from D --to D [--by queue,cluster,gpu-model,label] [--label-key K] [--step S]`:
// resource-hours per period and group (usageReport), as a table, CSV (-o csv) or JSON.
import type { Command } from "commander";
import { USAGE_REPORT } from "../client/queries.js";
import type { UsageRow } from "../client/types.js";
import { action, apiClientOf, globalOptions, print, printJson } from "../command-context.js";
import { CliError } from "../exit-codes.js";
import { usageCsv, usageTable } from "../output/usage-views.js";

const GROUPS: Record<string, string> = {
  queue: "QUEUE",
  cluster: "CLUSTER",
  "gpu-model": "GPU_MODEL",
  label: "LABEL",
};
const STEPS = ["hour", "day", "month"];

interface UsageOptions {
  from: string;
  to: string;
  by: string;
  labelKey?: string;
  step?: string;
}

function groupsOf(by: string): string[] {
  return by
    .split(",")
    .map((g) => g.trim().toLowerCase())
    .filter(Boolean)
    .map((g) => {
      const group = GROUPS[g];
      if (!group) throw new CliError(`--by: "${g}" is not one of ${Object.keys(GROUPS).join(", ")}`);
      return group;
    });
}

export function registerUsage(program: Command): void {
  program
    .command("usage")
    .description("GPU-, CPU-core- and memory-hours per period and group, with their cost (docs/usage.md)")
    .requiredOption(
      "--from <date>",
      "start: a date (UTC midnight) or a date-time with a zone, on a whole hour",
    )
    .requiredOption("--to <date>", "end (excluded)")
    .option("--by <groups>", "comma-separated: queue, cluster, gpu-model, label", "")
    .option("--label-key <key>", "the job label --by label groups by")
    .option("--step <step>", "hour, day or month (default: the whole range)")
    .action(
      action(async (opts: UsageOptions, cmd: Command) => {
        const format = globalOptions(cmd).output ?? "table";
        if (!["table", "json", "csv"].includes(format))
          throw new CliError(`--output: "${format}" is not one of table, json, csv`);
        const step = opts.step?.toLowerCase();
        if (step !== undefined && !STEPS.includes(step))
          throw new CliError(`--step: "${opts.step}" is not one of ${STEPS.join(", ")}`);
        const groupBy = groupsOf(opts.by);
        const { usageReport } = await apiClientOf(cmd).request<{ usageReport: UsageRow[] }>(USAGE_REPORT, {
          from: opts.from,
          to: opts.to,
          groupBy,
          labelKey: opts.labelKey ?? null,
          step: step?.toUpperCase() ?? null,
        });
        if (format === "json") return printJson(usageReport);
        if (format === "csv") return print(usageCsv(usageReport));
        if (!usageReport.length) return print("No usage in that range.");
        print(usageTable(usageReport, groupBy, step !== undefined));
      }),
    );
}
