// `fleetq wait [JOB...] [-l key=value,...] [--timeout 30m]`: waits until every job named, or every
// job with these labels, has finished; exits 0 only if all of them succeeded (1 if any failed or
// was cancelled, 2 timed out, 3 no such job) — a CI pipeline's last step after a matrix submit.
import type { Command } from "commander";
import type { ApiClient } from "../client/api-client.js";
import { type JobBrief, type JobSet, jobSetSummary, waitForJobs } from "../client/wait-for-jobs.js";
import { action, apiClientOf, outputFormat, printErr, printJson } from "../command-context.js";
import { parseDuration } from "../duration.js";
import { CliError, EXIT, type ExitCode } from "../exit-codes.js";
import { parseLabelSelectors } from "../label-selector.js";

interface WaitOptions {
  selector?: string[];
  timeout?: string;
}

/** Waits for the set, reporting progress on stderr; the exit code of its outcome. */
export async function waitForJobSet(
  client: ApiClient,
  set: JobSet,
  opts: { timeoutMs?: number; timeoutText?: string; json: boolean },
): Promise<ExitCode> {
  let last = "";
  const result = await waitForJobs(client, set, {
    timeoutMs: opts.timeoutMs,
    onUpdate: (jobs) => {
      const line = jobSetSummary(jobs);
      if (line !== last) printErr(line);
      last = line;
    },
    onNote: (t) => printErr(t),
  });
  if (opts.json) printJson(result.jobs);
  if (result.outcome === "timeout") {
    printErr(`fleetq: not every job finished within ${opts.timeoutText} (${jobSetSummary(result.jobs)})`);
    return EXIT.TIMED_OUT;
  }
  const unsuccessful = result.jobs.filter((j: JobBrief) => j.state !== "SUCCEEDED");
  for (const j of unsuccessful.slice(0, 10)) printErr(`  job ${j.name} (${j.id}) ${j.state}`);
  if (unsuccessful.length > 10) printErr(`  … and ${unsuccessful.length - 10} more`);
  return unsuccessful.length ? EXIT.JOB_FAILED : EXIT.OK;
}

export function registerWait(program: Command): void {
  program
    .command("wait")
    .description("wait until jobs finish: those named, or all with some labels; exit 0 only if all succeeded")
    .argument("[jobs...]", "job ids")
    .option(
      "-l, --selector <key=value,...>",
      "every job with these labels (all of them; repeatable)",
      (v: string, prev: string[] = []) => [...prev, v],
    )
    .option("--timeout <duration>", "give up after this long (e.g. 30m, 1h30m), exit code 2")
    .addHelpText(
      "after",
      "\nExit codes: 0 every job succeeded, 1 some job failed or was cancelled, 2 timed out,\n" +
        "3 no such job (or bad arguments), 4 API unreachable.",
    )
    .action(
      action(async (ids: string[], opts: WaitOptions, cmd: Command) => {
        const labels = parseLabelSelectors(opts.selector, "--selector");
        if (ids.length && labels.length) throw new CliError("give job ids or --selector, not both");
        if (!ids.length && !labels.length)
          throw new CliError("name the jobs to wait for: job ids or -l key=value");
        const timeoutMs = opts.timeout ? parseDuration(opts.timeout, "--timeout") : undefined;
        const set: JobSet = ids.length ? { ids } : { labels };
        return waitForJobSet(apiClientOf(cmd), set, {
          timeoutMs,
          timeoutText: opts.timeout,
          json: outputFormat(cmd) === "json",
        });
      }),
    );
}
