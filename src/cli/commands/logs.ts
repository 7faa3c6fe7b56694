// `fleetq logs JOB [--task T] [--index I | --all] [-f] [--tail N] [--since 10m] [--previous]
// [--timestamps]`: a job's pod logs, read through the API from the pod's cluster (no cluster
// credentials needed). One pod by default (rank 0: the first pod of the first task); --all every
// pod (of the task with --task), each line prefixed with its pod, as `kubectl logs --prefix`.
import type { Command } from "commander";
import { JOB_POD_STATES, JOB_TASKS, POD_LOG_LINES, POD_LOGS } from "../client/queries.js";
import type { ApiClient } from "../client/api-client.js";
import { action, apiClientOf, connectionOf, print, printErr } from "../command-context.js";
import { parseDuration } from "../duration.js";
import { CliError, EXIT, type ExitCode } from "../exit-codes.js";

interface LogsOptions {
  task?: string;
  index?: string;
  all?: boolean;
  follow?: boolean;
  tail?: string;
  since?: string;
  previous?: boolean;
  timestamps?: boolean;
}

interface JobPods {
  id: string;
  name: string;
  state: string;
  restarts: number;
  tasks: { name: string; replicas: number }[];
  pods: { name: string; task: string; state: string }[];
}

export function registerLogs(program: Command): void {
  program
    .command("logs")
    .description(
      "print a job's pod logs, read from its cluster through the API (ADMIN or a MEMBER of its queue)",
    )
    .argument("<job>", "the job id")
    .option("--task <task>", "a pod of this task (default: the job's first task)")
    .option("--index <i>", "the pod of that index within its task (default 0)")
    .option("--all", "every pod of the job (of --task's task), each line prefixed with its pod")
    .option("-f, --follow", "keep printing lines as they are written, until the pods' runs end")
    .option("--tail <n>", "only the last n lines (of each pod)")
    .option("--since <duration>", "only lines written in the last duration (e.g. 10m, 1h)")
    .option("--previous", "the run of the job's previous attempt (before its last gang restart)")
    .option("--timestamps", "each line with the time it was written")
    .action(
      action(async (id: string, opts: LogsOptions, cmd: Command) => {
        if (opts.all && opts.index !== undefined)
          throw new CliError("give either --index or --all, not both");
        if (opts.follow && opts.previous)
          throw new CliError("--previous reads a run that has ended: it cannot be followed");
        const tailLines = opts.tail === undefined ? null : wholeNumber(opts.tail, "--tail");
        const sinceSeconds = opts.since
          ? Math.max(1, Math.round(parseDuration(opts.since, "--since") / 1000))
          : null;
        const client = apiClientOf(cmd);
        const job = await jobPods(client, id);
        if (!job) throw new CliError(`job ${id} not found`);
        const pods = choosePods(job, opts);
        const prefixed = opts.all === true || pods.length > 1;
        const show = (pod: string, text: string) => print(prefixed ? `[${pod}] ${text}` : text);
        const args = { job: job.id, tailLines, sinceSeconds, timestamps: opts.timestamps ?? false };
        if (!opts.follow) {
          for (const pod of pods) {
            const { podLogs } = await client.request<{ podLogs: string }>(POD_LOGS, {
              ...args,
              pod,
              previous: opts.previous ?? false,
            });
            const lines = podLogs.endsWith("\n") ? podLogs.slice(0, -1) : podLogs;
            if (lines) for (const line of lines.split("\n")) show(pod, line);
          }
          return EXIT.OK;
        }
        return followAcrossRestarts(cmd, job, pods, args, show, prefixed);
      }),
    );
}

type Args = { job: string; tailLines: number | null; sinceSeconds: number | null; timestamps: boolean };
const FINISHED = new Set(["SUCCEEDED", "FAILED", "CANCELLED"]);
const STARTED = new Set(["RUNNING", "RELEASING", "SUCCEEDED", "FAILED"]);

/** Follows the pods' logs; when the job restarts its gang meanwhile, the next attempt's too (its
 * whole log), until the job has finished or its pods' runs end without a restart. */
async function followAcrossRestarts(
  cmd: Command,
  first: JobPods,
  pods: string[],
  args: Args,
  show: (pod: string, text: string) => void,
  prefixed: boolean,
): Promise<ExitCode> {
  const client = apiClientOf(cmd);
  let job = first;
  let attemptArgs = args;
  for (;;) {
    job = await untilStarted(client, job, pods);
    if (FINISHED.has(job.state) && !pods.some((p) => started(job, p))) return EXIT.OK;
    await followAttempt(cmd, pods, attemptArgs, show, prefixed);
    const now = await afterRuns(client, job, pods);
    if (!now || FINISHED.has(now.state) || now.restarts === job.restarts) return EXIT.OK;
    printErr(`fleetq: job ${now.name} restarted its gang: following attempt ${now.restarts + 1}`);
    job = now;
    attemptArgs = { ...args, tailLines: null, sinceSeconds: null };
  }
}

/** The job once the control plane has heard that the runs followed ended (their streams end when
 * the cluster says so; its report may come a moment later): restarted, finished, or the pods done. */
async function afterRuns(client: ApiClient, job: JobPods, pods: string[]): Promise<JobPods | null> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const now = await jobPods(client, job.id);
    const running = (j: JobPods) =>
      pods.some((p) => ["RUNNING", "RELEASING"].includes(j.pods.find((x) => x.name === p)?.state ?? ""));
    if (
      !now ||
      now.restarts !== job.restarts ||
      FINISHED.has(now.state) ||
      !running(now) ||
      Date.now() > deadline
    )
      return now;
    await new Promise((r) => setTimeout(r, 500));
  }
}

const started = (job: JobPods, pod: string) => STARTED.has(job.pods.find((p) => p.name === pod)?.state ?? "");

/** The job once every pod asked for has started (or the job has finished), saying what it waits for. */
async function untilStarted(client: ApiClient, job: JobPods, pods: string[]): Promise<JobPods> {
  let said = false;
  for (;;) {
    const waiting = pods.filter((p) => !started(job, p));
    if (!waiting.length || FINISHED.has(job.state)) return job;
    if (!said)
      printErr(`fleetq: waiting for ${waiting.join(", ")} to start (job ${job.name} is ${job.state})`);
    said = true;
    await new Promise((r) => setTimeout(r, 1000));
    const now = await jobPods(client, job.id);
    if (!now) throw new CliError(`job ${job.id} not found`);
    job = now;
  }
}

/** One attempt's streams, until every one has ended (Ctrl-C ends them all). */
async function followAttempt(
  cmd: Command,
  pods: string[],
  args: Args,
  show: (pod: string, text: string) => void,
  prefixed: boolean,
): Promise<void> {
  // Loaded when needed: the websocket client weighs on every command's start.
  const { subscribe } = await import("../client/subscriptions.js");
  const streams = pods.map((pod) =>
    subscribe<{ podLogLines: { line: string; end: string | null } }>(
      connectionOf(cmd),
      POD_LOG_LINES,
      { ...args, pod },
      ({ podLogLines: l }) => {
        if (l.end === null) show(pod, l.line);
        else if (prefixed) printErr(`fleetq: [${pod}] ${l.end}`);
      },
    ),
  );
  const stop = () => {
    for (const s of streams) s.dispose();
    process.exit(130);
  };
  process.once("SIGINT", stop);
  try {
    await Promise.all(streams.map((s) => s.done));
  } catch (err) {
    for (const s of streams) s.dispose();
    throw err instanceof CliError
      ? err
      : new CliError(`log stream failed: ${(err as Error).message}`, EXIT.UNAVAILABLE);
  } finally {
    process.off("SIGINT", stop);
  }
}

/** The job with where its pods stand, read for what it costs: the page of pods asked for is the
 * job's size (the API prices a page by its size, not by the pods there are). */
async function jobPods(client: ApiClient, id: string): Promise<JobPods | null> {
  const { job } = await client.request<{ job: Omit<JobPods, "pods"> | null }>(JOB_TASKS, { id });
  if (!job) return null;
  const first = Math.min(
    1000,
    Math.max(
      1,
      job.tasks.reduce((n, t) => n + t.replicas, 0),
    ),
  );
  return (await client.request<{ job: JobPods | null }>(JOB_POD_STATES, { id, first })).job;
}

/** The pods asked for: --all (of a task), a task's pod by index, or rank 0. */
function choosePods(job: JobPods, opts: LogsOptions): string[] {
  const task = opts.task ?? job.tasks[0]?.name;
  if (opts.task && !job.tasks.some((t) => t.name === opts.task))
    throw new CliError(
      `job ${job.name} has no task "${opts.task}" (its tasks: ${job.tasks.map((t) => t.name).join(", ")})`,
    );
  const ofTask = (name: string) => job.pods.filter((p) => p.task === name).map((p) => p.name);
  if (opts.all) return opts.task ? ofTask(opts.task) : job.tasks.flatMap((t) => ofTask(t.name));
  const index = opts.index === undefined ? 0 : wholeNumber(opts.index, "--index");
  const pod = `${task}-${index}`;
  if (!job.pods.some((p) => p.name === pod))
    throw new CliError(
      `job ${job.name} has no pod ${pod} (task ${task} has ${ofTask(task ?? "").length} pods)`,
    );
  return [pod];
}

function wholeNumber(text: string, flag: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n))
    throw new CliError(`${flag}: "${text}" is not a whole number`);
  return n;
}
