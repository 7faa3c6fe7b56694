// `fleetq queue create|set-quota|move|delete`: the queue tree and its quotas (ADMIN).
import type { Command } from "commander";
import { parseQuantity } from "../../protocol/quantity.js";
import { CREATE_QUEUE, SET_QUOTA, UPDATE_QUEUE } from "../client/queries.js";
import type { QueueView, ResourceName } from "../client/types.js";
import { action, apiClientOf, outputFormat, print, printJson } from "../command-context.js";
import { CliError } from "../exit-codes.js";
import { queuesTable } from "../output/queue-views.js";

function priorityOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new CliError(`--priority: "${value}" is not a whole number >= 0`);
  return n;
}

/** Quota amounts in the resource's own terms: gpu devices, cpu cores ("500m" ok), memory ("512Gi");
 * -1 or "unlimited" = unlimited. Returned in the API's units (millicores, bytes). */
export function quotaAmount(resource: ResourceName, value: string, flag: string): number {
  const v = value.trim().toLowerCase();
  if (v === "-1" || v === "unlimited") return -1;
  let n: number;
  try {
    n = parseQuantity(value.trim());
  } catch {
    const example = resource === "MEMORY" ? '"512Gi"' : resource === "CPU" ? '"64" (cores) or "500m"' : '"8"';
    throw new CliError(
      `${flag}: "${value}" is not an amount of ${resource.toLowerCase()} (e.g. ${example}, or unlimited)`,
    );
  }
  if (n < 0)
    throw new CliError(`${flag}: "${value}" must not be negative (use -1 or unlimited for no limit)`);
  if (resource === "CPU") return Math.round(n * 1000);
  if (resource === "MEMORY") return Math.round(n);
  return n;
}

const RESOURCES: Record<string, ResourceName> = { gpu: "GPU", cpu: "CPU", memory: "MEMORY" };

function show(cmd: Command, queue: QueueView, verb: string): void {
  if (outputFormat(cmd) === "json") {
    printJson(queue);
    return;
  }
  print(`queue ${queue.name} ${verb}`);
  print(queuesTable([{ ...queue, parent: null }]));
}

export function registerQueue(program: Command): void {
  const queue = program.command("queue").description("shape the queue tree and its quotas (ADMIN)");

  queue
    .command("create")
    .description("create a queue")
    .argument("<name>", "the queue name")
    .option("-p, --parent <queue>", "the parent queue (default: a root)")
    .option("--priority <n>", "higher is served first among siblings (default 100)")
    .action(
      action(async (name: string, opts: { parent?: string; priority?: string }, cmd: Command) => {
        const { createQueue } = await apiClientOf(cmd).request<{ createQueue: QueueView }>(CREATE_QUEUE, {
          input: { name, parent: opts.parent, priority: priorityOf(opts.priority) },
        });
        show(cmd, createQueue, `created${opts.parent ? ` under ${opts.parent}` : ""}`);
      }),
    );

  queue
    .command("set-quota")
    .description("set a queue's quota for one resource: the default row, or a cluster's override")
    .argument("<queue>", "the queue")
    .requiredOption("-r, --resource <resource>", "gpu, cpu or memory")
    .option(
      "--deserved <amount>",
      "guaranteed share (gpu devices, cpu cores, memory like 512Gi; -1 = all it asks)",
    )
    .option("--limit <amount>", "hard cap (same units; -1 or unlimited = none)")
    .option("--weight <w>", "over-quota weight: how spare capacity is split among siblings")
    .option("-c, --cluster <cluster>", "override for this cluster only (default: the row for every cluster)")
    .action(
      action(
        async (
          name: string,
          opts: { resource: string; deserved?: string; limit?: string; weight?: string; cluster?: string },
          cmd: Command,
        ) => {
          const resource = RESOURCES[opts.resource.toLowerCase()];
          if (!resource) throw new CliError(`--resource: "${opts.resource}" is not one of gpu, cpu, memory`);
          if (opts.deserved === undefined && opts.limit === undefined && opts.weight === undefined) {
            throw new CliError("set-quota needs at least one of --deserved, --limit, --weight");
          }
          let weight: number | undefined;
          if (opts.weight !== undefined) {
            weight = Number(opts.weight);
            if (!Number.isFinite(weight) || weight < 0)
              throw new CliError(`--weight: "${opts.weight}" is not a number >= 0`);
          }
          const input = {
            queue: name,
            cluster: opts.cluster ?? null,
            resource,
            ...(opts.deserved !== undefined
              ? { deserved: quotaAmount(resource, opts.deserved, "--deserved") }
              : {}),
            ...(opts.limit !== undefined ? { limit: quotaAmount(resource, opts.limit, "--limit") } : {}),
            ...(weight !== undefined ? { overQuotaWeight: weight } : {}),
          };
          const { setQueueQuota } = await apiClientOf(cmd).request<{ setQueueQuota: QueueView }>(SET_QUOTA, {
            input,
          });
          show(
            cmd,
            setQueueQuota,
            `quota set (${resource.toLowerCase()}${opts.cluster ? ` on ${opts.cluster}` : ", every cluster"})`,
          );
        },
      ),
    );

  queue
    .command("move")
    .description("move a queue under another parent (or to the top), optionally changing its priority")
    .argument("<queue>", "the queue")
    .option("-p, --parent <queue>", "the new parent")
    .option("--top", "make it a root queue")
    .option("--priority <n>", "a new priority")
    .action(
      action(
        async (name: string, opts: { parent?: string; top?: boolean; priority?: string }, cmd: Command) => {
          if (opts.parent && opts.top) throw new CliError("give --parent or --top, not both");
          if (!opts.parent && !opts.top && opts.priority === undefined) {
            throw new CliError("queue move needs --parent <queue> or --top (and/or --priority)");
          }
          const input: Record<string, unknown> = {};
          if (opts.parent) input.parent = opts.parent;
          if (opts.top) input.parent = null;
          if (opts.priority !== undefined) input.priority = priorityOf(opts.priority);
          const { updateQueue } = await apiClientOf(cmd).request<{ updateQueue: QueueView }>(UPDATE_QUEUE, {
            name,
            input,
          });
          show(
            cmd,
            updateQueue,
            updateQueue.parent ? `now under ${updateQueue.parent.name}` : "now a root queue",
          );
        },
      ),
    );

  queue
    .command("delete")
    .description("delete a queue (refused while it has children or unfinished jobs)")
    .argument("<queue>", "the queue")
    .action(
      action(async (name: string, _opts: unknown, cmd: Command) => {
        await apiClientOf(cmd).request("mutation($name: String!) { deleteQueue(name: $name) }", { name });
        print(`queue ${name} deleted`);
      }),
    );
}
