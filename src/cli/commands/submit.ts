// `fleetq submit job.yaml [--queue Q] [--cluster C] [--wait] [--timeout 30m] [--dry-run]`: submits a job
// spec; with --wait follows it and exits with its outcome (0 succeeded, 1 failed or cancelled,
// 2 timed out, 3 rejected) — the command CI pipelines call.
import type { Command } from "commander";
import { ApiError } from "../client/api-client.js";
import type { ApiClient } from "../client/api-client.js";
import {
  CANCEL_JOB,
  JOB_EVENTS,
  SUBMIT_JOB,
  SUBMIT_JOBS,
  SUBMIT_WORKLOAD,
  SUBMIT_WORKLOADS,
} from "../client/queries.js";
import type { JobView } from "../client/types.js";
import { waitForJob } from "../client/wait-for-job.js";
import { action, apiClientOf, outputFormat, print, printErr, printJson } from "../command-context.js";
import { parseDuration } from "../duration.js";
import { CliError, EXIT, type ExitCode } from "../exit-codes.js";
import { batchFieldOf, loadJobSpecs, specFieldOf } from "../job-spec.js";
import { JobProgress } from "../output/job-progress.js";
import { formatSeconds } from "../output/format.js";
import { waitForJobSet } from "./wait.js";
import { submitDryRun } from "./submit-dry-run.js";

interface SubmitOptions {
  queue?: string;
  cluster?: string;
  name?: string;
  idempotencyKey?: string;
  label?: string[];
  wait?: boolean;
  timeout?: string;
  cancelOnTimeout?: boolean;
  dryRun?: boolean;
}

export function registerSubmit(program: Command): void {
  program
    .command("submit")
    .description(
      "submit a job spec (YAML with the fields of SubmitJobInput; docs/job-spec.md) or a Kubernetes\n" +
        "manifest (Job, JobSet, PyTorchJob, MPIJob; docs/workloads.md); a file of several documents (---)\n" +
        "submits them all in one transaction",
    )
    .argument("<file>", 'the job spec or manifest ("-" = standard input)')
    .option(
      "-q, --queue <queue>",
      "the queue (overrides the file's, or a manifest's label fleetq.io/queue or kueue.x-k8s.io/queue-name)",
    )
    .option("-c, --cluster <cluster>", "the cluster (overrides the file's; default: admission chooses)")
    .option("--name <name>", "the job name (overrides the file's; a manifest's metadata.name)")
    .option(
      "--idempotency-key <key>",
      "a retried submit with the same key returns the same job (CI: the run id); several documents: KEY-0, KEY-1, …",
    )
    .option(
      "--label <key=value>",
      "add a label to the job (every job of the file); repeatable (CI: --label pipeline=$CI_PIPELINE_ID)",
      (v: string, prev: string[] = []) => [...prev, v],
    )
    .option(
      "-w, --wait",
      "follow the job and exit with its outcome: 0 succeeded, 1 failed/cancelled, 2 timed out",
    )
    .option("--timeout <duration>", "with --wait: give up after this long (e.g. 30m, 1h30m), exit code 2")
    .option("--cancel-on-timeout", "with --timeout: cancel the job when the time is up")
    .option(
      "--dry-run",
      "submit nothing: show the cluster admission would choose, the estimated start there and on the\n" +
        "runners-up, and what it would evict (-o json for pipelines)",
    )
    .addHelpText(
      "after",
      "\nExit codes: 0 submitted (or, with --wait, succeeded), 1 failed or cancelled, 2 timed out,\n" +
        "3 rejected (bad spec, unknown queue, no permission), 4 API unreachable.",
    )
    .action(
      action(async (file: string, opts: SubmitOptions, cmd: Command) => {
        const timeoutMs = opts.timeout ? parseDuration(opts.timeout, "--timeout") : undefined;
        if (timeoutMs !== undefined && !opts.wait) throw new CliError("--timeout needs --wait");
        if (opts.cancelOnTimeout && timeoutMs === undefined)
          throw new CliError("--cancel-on-timeout needs --timeout");
        if (opts.dryRun && opts.wait)
          throw new CliError("--dry-run submits nothing to wait for: drop --wait");
        const { inputs, warnings, workloads } = loadJobSpecs(file, opts);
        for (const w of warnings) printErr(`fleetq: warning: ${w}`);
        const client = apiClientOf(cmd);
        const json = outputFormat(cmd) === "json";
        if (opts.dryRun) return submitDryRun(client, file, inputs, workloads, json);
        if (inputs.length > 1)
          return submitMany(client, file, inputs, workloads, { ...opts, timeoutMs }, json);
        const input = inputs[0]!;

        let job: JobView;
        try {
          job = workloads
            ? (await client.request<{ submitWorkload: JobView }>(SUBMIT_WORKLOAD, { input })).submitWorkload
            : (await client.request<{ submitJob: JobView }>(SUBMIT_JOB, { input })).submitJob;
        } catch (e) {
          if (e instanceof ApiError && e.field) {
            throw new CliError(
              `${file}: field ${specFieldOf(e.field) ?? e.field}: ${e.message.replace(/^input\.[^:]*: /, "")}`,
              e.exitCode,
            );
          }
          throw e;
        }
        for (const w of job.warnings ?? []) printErr(`fleetq: warning: ${w}`);
        if (!opts.wait) {
          if (json) printJson(job);
          else print(job.id);
          printErr(`job ${job.name} (${job.id}) submitted to queue ${job.queue.name}: ${job.state}`);
          return EXIT.OK;
        }
        if (!json) print(job.id);
        printErr(
          `job ${job.name} (${job.id}) submitted to queue ${job.queue.name}; waiting${timeoutMs ? ` up to ${formatSeconds(Math.round(timeoutMs / 1000))}` : ""}`,
        );

        const progress = new JobProgress();
        let restarts = 0;
        const noteRestarts = async (j: JobView) => {
          if (j.restarts <= restarts) return;
          restarts = j.restarts;
          const why = await lastRestart(client, j.id).catch(() => null);
          progress.note(`job ${j.name} restarted: attempt ${j.attempt}${why ? ` (${why})` : ""}`);
        };
        const stopOnSignal = () => {
          progress.stop();
          printErr(
            `\nfleetq: stopped waiting; the job goes on (fleetq get job ${job.id}, fleetq cancel ${job.id})`,
          );
          process.exit(130);
        };
        process.once("SIGINT", stopOnSignal);
        const result = await waitForJob(client, job, {
          timeoutMs,
          onUpdate: (j) => {
            progress.update(j);
            void noteRestarts(j);
          },
          onNote: (t) => progress.note(t),
        }).finally(() => {
          progress.stop();
          process.off("SIGINT", stopOnSignal);
        });

        if (json) printJson(result.job);
        if (result.outcome === "timeout") {
          printErr(`fleetq: job ${job.id} did not finish within ${opts.timeout} (state ${result.job.state})`);
          if (opts.cancelOnTimeout) {
            await client.request(CANCEL_JOB, { id: job.id });
            printErr(`fleetq: job ${job.id} cancelled`);
          }
          return EXIT.TIMED_OUT;
        }
        const failedPods = result.job.pods.filter((p) => p.state === "FAILED");
        const tries = result.job.restarts > 0 ? ` and ${result.job.restarts} restart(s)` : "";
        printErr(`job ${job.name} (${job.id}) ${result.job.state} after ${progress.elapsed()}${tries}`);
        for (const p of failedPods.slice(0, 5))
          printErr(
            `  pod ${p.name} FAILED${p.exitCode != null ? ` (exit code ${p.exitCode})` : ""}${p.message ? `: ${p.message}` : ""}`,
          );
        return result.job.state === "SUCCEEDED" ? EXIT.OK : EXIT.JOB_FAILED;
      }),
    );
}

/** Several documents: one submitJobs call (all or none); with --wait, until every job finished. */
async function submitMany(
  client: ApiClient,
  file: string,
  inputs: Record<string, unknown>[],
  workloads: boolean,
  opts: SubmitOptions & { timeoutMs?: number },
  json: boolean,
): Promise<ExitCode> {
  let jobs: JobView[];
  try {
    jobs = workloads
      ? (await client.request<{ submitWorkloads: JobView[] }>(SUBMIT_WORKLOADS, { inputs })).submitWorkloads
      : (await client.request<{ submitJobs: JobView[] }>(SUBMIT_JOBS, { inputs })).submitJobs;
  } catch (e) {
    const at = e instanceof ApiError ? batchFieldOf(e.field) : null;
    if (e instanceof ApiError && at) {
      throw new CliError(
        `${file}: document ${at.document}${at.field ? `: field ${at.field}` : ""}: ${e.message.replace(/^inputs\[\d+\][^:]*: /, "")}`,
        e.exitCode,
      );
    }
    throw e;
  }
  if (json) printJson(jobs);
  else for (const j of jobs) print(j.id);
  jobs.forEach((j, i) => {
    for (const w of j.warnings ?? []) printErr(`fleetq: warning: ${file}: document ${i + 1}: ${w}`);
  });
  printErr(`${jobs.length} jobs submitted from ${file}`);
  if (!opts.wait) return EXIT.OK;
  const code = await waitForJobSet(
    client,
    { ids: [...new Set(jobs.map((j) => j.id))] },
    {
      timeoutMs: opts.timeoutMs,
      timeoutText: opts.timeout,
      json: false,
    },
  );
  if (code === EXIT.TIMED_OUT && opts.cancelOnTimeout) {
    for (const j of jobs) await client.request(CANCEL_JOB, { id: j.id }).catch(() => {});
    printErr(`fleetq: ${jobs.length} jobs cancelled`);
  }
  return code;
}

/** Why the job last restarted, as its job.restarted event says. */
async function lastRestart(client: ApiClient, id: string): Promise<string | null> {
  const { job } = await client.request<{ job: { events: { kind: string; message: string }[] } | null }>(
    JOB_EVENTS,
    { id },
  );
  const event = job?.events.filter((e) => e.kind === "job.restarted").at(-1);
  return event ? event.message.replace(/^job \S+ restarted \([^)]*\): /, "") : null;
}
