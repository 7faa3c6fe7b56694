// `fleetq snapshot export --cluster C [-o FILE]`: the live cluster as a scenario file that
// `fleetq simulate` runs. `fleetq whatif --cluster C [--set-quota QUEUE:RES=DESERVED[:LIMIT]]…
// [--config FILE]`: one scheduling cycle on the live snapshot with the changes — which jobs would
// start, which pods would be evicted, how each queue's fair share would move. Both ADMIN; both only
// read (the API's clusterScenario and whatIf queries).
import { readFileSync, writeFileSync } from "node:fs";
import { extname } from "node:path";
import type { Command } from "commander";
import { parse as parseYaml, stringify as toYaml } from "yaml";
import { CLUSTER_SCENARIO, WHAT_IF } from "../client/queries.js";
import type { ResourceName, WhatIfResult } from "../client/types.js";
import { action, apiClientOf, globalOptions, outputFormat, print, printJson } from "../command-context.js";
import { CliError } from "../exit-codes.js";
import { formatResource, type ResourceKey } from "../output/format.js";
import { renderTable } from "../output/table.js";
import { quotaAmount } from "./queue.js";

const RESOURCES: Record<string, ResourceName> = { gpu: "GPU", cpu: "CPU", memory: "MEMORY" };

export interface QuotaChangeInput {
  queue: string;
  resource: ResourceName;
  deserved: number | null;
  limit: number | null;
}

/** "QUEUE:RES=DESERVED[:LIMIT]" (an empty DESERVED keeps it: "team:gpu=:8" changes only the limit). */
export function parseSetQuota(value: string): QuotaChangeInput {
  const flag = "--set-quota";
  const m = /^([^:=\s]+):([a-zA-Z]+)=([^:]*)(?::(.*))?$/.exec(value.trim());
  if (!m) throw new CliError(`${flag}: "${value}" is not QUEUE:RES=DESERVED[:LIMIT] (e.g. team-a:gpu=16:32)`);
  const resource = RESOURCES[m[2]!.toLowerCase()];
  if (!resource) throw new CliError(`${flag}: "${m[2]}" is not one of gpu, cpu, memory`);
  const deserved = m[3] === "" ? null : quotaAmount(resource, m[3]!, flag);
  const limit = m[4] === undefined || m[4] === "" ? null : quotaAmount(resource, m[4], flag);
  if (deserved === null && limit === null) throw new CliError(`${flag}: "${value}" changes nothing`);
  return { queue: m[1]!, resource, deserved, limit };
}

function readConfig(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    throw new CliError(`--config: cannot read ${file}: ${(e as Error).message}`);
  }
  try {
    return extname(file) === ".json" ? JSON.parse(text) : parseYaml(text);
  } catch (e) {
    throw new CliError(`--config: ${file} is not valid YAML or JSON: ${(e as Error).message}`);
  }
}

export function whatIfText(r: WhatIfResult, key: ResourceKey): string {
  const out: string[] = [`What-if on cluster ${r.cluster}: one scheduling cycle, nothing changed.`];
  const jobs = (title: string, list: WhatIfResult["starts"]) => {
    out.push("", `${title} (${list.length})${list.length ? ":" : ""}`);
    if (list.length)
      out.push(
        renderTable(
          [
            { header: "JOB", value: (j) => j.job },
            { header: "NAME", value: (j) => j.name },
            { header: "QUEUE", value: (j) => j.queue },
            { header: "PODS", value: (j) => String(j.pods), align: "right" },
            { header: "NODES", value: (j) => j.nodes.join(",") },
          ],
          list,
        ),
      );
  };
  jobs("Would start", r.starts);
  if (r.pipelined.length) jobs("Would start once the evictions finish", r.pipelined);
  out.push("", `Would be evicted (${r.evictions.length})${r.evictions.length ? ":" : ""}`);
  if (r.evictions.length)
    out.push(
      renderTable(
        [
          { header: "JOB", value: (e) => e.job },
          { header: "NAME", value: (e) => e.name },
          { header: "QUEUE", value: (e) => e.queue },
          { header: "POD", value: (e) => e.pod },
          { header: "NODE", value: (e) => e.node },
          { header: "BY", value: (e) => e.action },
          { header: "WHY", value: (e) => e.message },
        ],
        r.evictions,
      ),
    );
  const move = (a: string, b: string) => (a === b ? a : `${a} -> ${b}`);
  out.push("", `Queues (${key}):`);
  out.push(
    renderTable(
      [
        { header: "QUEUE", value: (q) => q.queue },
        {
          header: "DESERVED",
          value: (q) => move(formatResource(q.deservedBefore, key), formatResource(q.deservedAfter, key)),
        },
        {
          header: "FAIR SHARE",
          value: (q) => move(formatResource(q.fairShareBefore, key), formatResource(q.fairShareAfter, key)),
        },
        {
          header: "ALLOCATED",
          value: (q) => move(formatResource(q.allocatedBefore, key), formatResource(q.allocatedAfter, key)),
        },
      ],
      r.queues,
    ),
  );
  return out.join("\n");
}

export function registerWhatIf(program: Command): void {
  const snapshot = program.command("snapshot").description("the live state of a cluster (ADMIN)");
  snapshot
    .command("export")
    .description("write the live cluster as a scenario file that `fleetq simulate` runs")
    .requiredOption("-c, --cluster <cluster>", "the cluster")
    .option(
      "-f, --file <file>",
      "write here (.yaml/.yml: YAML, else JSON; `-o FILE` works too); default stdout",
    )
    .action(
      action(async (opts: { cluster: string; file?: string }, cmd: Command) => {
        const o = globalOptions(cmd).output;
        const file = opts.file ?? (o && o !== "table" && o !== "json" ? o : undefined);
        const { clusterScenario } = await apiClientOf(cmd).request<{ clusterScenario: unknown }>(
          CLUSTER_SCENARIO,
          {
            cluster: opts.cluster,
          },
        );
        if (!file) return printJson(clusterScenario);
        const yaml = [".yaml", ".yml"].includes(extname(file));
        const text = yaml ? toYaml(clusterScenario) : `${JSON.stringify(clusterScenario, null, 2)}\n`;
        try {
          writeFileSync(file, text);
        } catch (e) {
          throw new CliError(`--file: cannot write ${file}: ${(e as Error).message}`);
        }
      }),
    );

  program
    .command("whatif")
    .description(
      "one scheduling cycle on the live cluster with changed quotas: what would start, be evicted, move (ADMIN)",
    )
    .requiredOption("-c, --cluster <cluster>", "the cluster")
    .option(
      "--set-quota <QUEUE:RES=DESERVED[:LIMIT]>",
      "a changed quota (gpu devices, cpu cores, memory like 512Gi; -1 = unlimited); repeatable",
      (v: string, all: string[]) => [...all, v],
      [] as string[],
    )
    .option("--config <file>", "a scheduler configuration (YAML/JSON) instead of the server's")
    .option("-r, --resource <resource>", "fair shares of gpu, cpu or memory", "gpu")
    .action(
      action(
        async (
          opts: { cluster: string; setQuota: string[]; config?: string; resource: string },
          cmd: Command,
        ) => {
          const key = opts.resource.toLowerCase() as ResourceKey;
          if (!["gpu", "cpu", "memory"].includes(key))
            throw new CliError(`--resource: "${opts.resource}" is not one of gpu, cpu, memory`);
          const quotas = opts.setQuota.map(parseSetQuota);
          const config = opts.config ? readConfig(opts.config) : null;
          const { whatIf } = await apiClientOf(cmd).request<{ whatIf: WhatIfResult }>(WHAT_IF, {
            cluster: opts.cluster,
            quotas,
            config,
          });
          if (outputFormat(cmd) === "json") return printJson(whatIf);
          print(whatIfText(whatIf, key));
        },
      ),
    );
}
