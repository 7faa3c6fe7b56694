// `fleetq fairshare [--cluster C] [--resource gpu|cpu|memory]`: deserved, fair share, allocated,
// requested, limit and recent usage per queue — per cluster and in total.
import type { Command } from "commander";
import { FAIR_SHARE, LIST_QUEUES } from "../client/queries.js";
import type { QueueShare, QueueView } from "../client/types.js";
import { action, apiClientOf, outputFormat, print, printJson } from "../command-context.js";
import { CliError } from "../exit-codes.js";
import type { ResourceKey } from "../output/format.js";
import { fairShareTable } from "../output/queue-views.js";

const RESOURCES: readonly ResourceKey[] = ["gpu", "cpu", "memory"];

export function registerFairShare(program: Command): void {
  program
    .command("fairshare")
    .description("fair share per queue: per cluster and in total (the scheduler's proportion plugin)")
    .option("-c, --cluster <cluster>", "only this cluster")
    .option("-r, --resource <resource>", "gpu, cpu, memory or all", "gpu")
    .action(
      action(async (opts: { cluster?: string; resource: string }, cmd: Command) => {
        const resource = opts.resource.toLowerCase();
        if (resource !== "all" && !RESOURCES.includes(resource as ResourceKey)) {
          throw new CliError(`--resource: "${opts.resource}" is not one of gpu, cpu, memory, all`);
        }
        const client = apiClientOf(cmd);
        const [{ fairShare }, { queues }] = await Promise.all([
          client.request<{ fairShare: QueueShare[] }>(FAIR_SHARE, { cluster: opts.cluster ?? null }),
          client.request<{ queues: QueueView[] }>(LIST_QUEUES),
        ]);
        if (outputFormat(cmd) === "json") return printJson(fairShare);
        if (!fairShare.length) return print("No fair-share rows (no queues or no clusters yet).");
        const tree = queues.map((q) => ({ name: q.name, parent: q.parent?.name ?? null }));
        const keys = resource === "all" ? RESOURCES : [resource as ResourceKey];
        print(keys.map((k) => fairShareTable(fairShare, tree, k)).join("\n\n"));
      }),
    );
}
