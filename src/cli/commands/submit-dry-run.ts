// `fleetq submit FILE --dry-run [-o json]`: what submitting the file would do now — the cluster
// admission would choose (or why none), when it would start there and on the runners-up, what it
// would evict — stored nowhere (the API's dryRunSubmit and its kin).
import type { ApiClient } from "../client/api-client.js";
import { ApiError } from "../client/api-client.js";
import {
  DRY_RUN_SUBMIT,
  DRY_RUN_SUBMIT_JOBS,
  DRY_RUN_SUBMIT_WORKLOAD,
  DRY_RUN_SUBMIT_WORKLOADS,
} from "../client/queries.js";
import type { SubmitDryRunView } from "../client/types.js";
import { print, printJson } from "../command-context.js";
import { CliError, EXIT, type ExitCode } from "../exit-codes.js";
import { batchFieldOf, specFieldOf } from "../job-spec.js";
import { formatSeconds } from "../output/format.js";
import { renderTable } from "../output/table.js";

/** The dry run of the file's inputs (one or several, specs or manifests). */
export async function submitDryRun(
  client: ApiClient,
  file: string,
  inputs: Record<string, unknown>[],
  workloads: boolean,
  json: boolean,
): Promise<ExitCode> {
  const answers = await request(client, file, inputs, workloads);
  if (json) printJson(inputs.length > 1 ? answers : answers[0]);
  else print(answers.map((a) => dryRunText(a)).join("\n\n"));
  return EXIT.OK;
}

async function request(
  client: ApiClient,
  file: string,
  inputs: Record<string, unknown>[],
  workloads: boolean,
): Promise<SubmitDryRunView[]> {
  try {
    if (inputs.length > 1) {
      const query = workloads ? DRY_RUN_SUBMIT_WORKLOADS : DRY_RUN_SUBMIT_JOBS;
      const r = await client.request<Record<string, SubmitDryRunView[]>>(query, { inputs });
      return Object.values(r)[0]!;
    }
    const query = workloads ? DRY_RUN_SUBMIT_WORKLOAD : DRY_RUN_SUBMIT;
    const r = await client.request<Record<string, SubmitDryRunView>>(query, { input: inputs[0] });
    return [Object.values(r)[0]!];
  } catch (e) {
    throw inFile(e, file);
  }
}

/** An API refusal naming the file's field (as `submit` names it). */
function inFile(e: unknown, file: string): unknown {
  if (!(e instanceof ApiError) || !e.field) return e;
  const at = batchFieldOf(e.field);
  if (at)
    return new CliError(
      `${file}: document ${at.document}${at.field ? `: field ${at.field}` : ""}: ${e.message.replace(/^inputs\[\d+\][^:]*: /, "")}`,
      e.exitCode,
    );
  return new CliError(
    `${file}: field ${specFieldOf(e.field) ?? e.field}: ${e.message.replace(/^input\.[^:]*: /, "")}`,
    e.exitCode,
  );
}

const when = (iso: string | null, now: number) => {
  if (!iso) return "-";
  const s = Math.round((Date.parse(iso) - now) / 1000);
  return s > 0 ? `in ${formatSeconds(s)}` : "now";
};

/** A short report: the decision, the clusters, the evictions. */
export function dryRunText(a: SubmitDryRunView, now = Date.now()): string {
  const where = a.cluster
    ? `would go to ${a.cluster}${a.named ? " (named by the job)" : ` (tier ${a.tier})`}`
    : "would wait for admission: no cluster takes it now";
  const start = a.estimatedStart
    ? `estimated start ${when(a.estimatedStart, now)}${!a.cluster && a.estimatedCluster ? ` on ${a.estimatedCluster}` : ""}`
    : "estimated start unknown";
  const out = [`Dry run of job ${a.name} in queue ${a.queue}: ${where}; ${start}. Nothing was submitted.`];
  // The chosen cluster's row says admission's words; without one, the reason is said here.
  if (!a.clusters.some((c) => c.chosen)) out.push(`  ${a.message}`);
  out.push("");
  out.push(
    renderTable(
      [
        { header: "CLUSTER", value: (c) => `${c.cluster}${c.chosen ? " *" : ""}` },
        { header: "START", value: (c) => (c.estimated ? when(c.estimatedStart, now) : "") },
        { header: "WHY", value: (c) => c.message },
      ],
      a.clusters,
    ),
  );
  out.push("", `Would evict (${a.evictions.length} job(s))${a.evictions.length ? ":" : ""}`);
  if (a.evictions.length)
    out.push(
      renderTable(
        [
          { header: "JOB", value: (e) => e.job },
          { header: "NAME", value: (e) => e.name },
          { header: "QUEUE", value: (e) => e.queue },
          { header: "PODS", value: (e) => String(e.pods), align: "right" },
          { header: "BY", value: (e) => e.action },
          { header: "WHEN", value: (e) => (e.now ? "next cycle" : when(e.at, now)) },
        ],
        a.evictions,
      ),
    );
  return out.join("\n");
}
