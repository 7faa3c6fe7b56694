// Follows a set of jobs — those with some labels, or named by id — until every one has finished
// or a deadline passes, by polling (one page query per 500 jobs every poll). Transient API
// failures are waited out, as for one job. The set is read again at every poll: jobs labelled
// alike that are submitted meanwhile join it.
import { CliError, EXIT } from "../exit-codes.js";
import type { LabelMatch } from "../label-selector.js";
import type { ApiClient } from "./api-client.js";
import { GET_JOB_STATE, LIST_JOB_STATES } from "./queries.js";
import { type JobState, TERMINAL_JOB_STATES } from "./types.js";

export interface JobBrief {
  id: string;
  name: string;
  state: JobState;
}

export type JobSet = { labels: LabelMatch[] } | { ids: string[] };

export interface WaitAllOptions {
  /** undefined = no deadline */
  timeoutMs?: number;
  pollMs?: number;
  onUpdate(jobs: readonly JobBrief[]): void;
  onNote(text: string): void;
}

export type WaitAllResult = { outcome: "finished" | "timeout"; jobs: JobBrief[] };

const PAGE = 500;

/** The jobs of the set now (by labels: in the API's order, newest first). Jobs named by id that
 * `finished` holds are not asked for again (a finished job stays finished); the others are, a
 * few requests at a time. */
export async function readJobSet(
  client: ApiClient,
  set: JobSet,
  finished: ReadonlyMap<string, JobBrief> = new Map(),
): Promise<JobBrief[]> {
  if ("ids" in set) {
    const out = new Map<string, JobBrief>();
    const ask = set.ids.filter((id) => {
      const done = finished.get(id);
      if (done) out.set(id, done);
      return !done;
    });
    for (let i = 0; i < ask.length; i += 8) {
      await Promise.all(
        ask.slice(i, i + 8).map(async (id) => {
          const { job } = await client.request<{ job: JobBrief | null }>(GET_JOB_STATE, { id });
          if (!job) throw new CliError(`job ${id} not found`);
          out.set(id, job);
        }),
      );
    }
    return set.ids.map((id) => out.get(id)!);
  }
  const jobs: JobBrief[] = [];
  let after: string | null = null;
  for (;;) {
    const page: {
      jobs: { edges: { node: JobBrief }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } };
    } = await client.request(LIST_JOB_STATES, { filter: { labels: set.labels }, first: PAGE, after });
    jobs.push(...page.jobs.edges.map((e) => e.node));
    if (!page.jobs.pageInfo.hasNextPage) return jobs;
    after = page.jobs.pageInfo.endCursor;
  }
}

export async function waitForJobs(
  client: ApiClient,
  set: JobSet,
  opts: WaitAllOptions,
): Promise<WaitAllResult> {
  const deadline = opts.timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + opts.timeoutMs;
  let latest: JobBrief[] = [];
  const finished = new Map<string, JobBrief>();
  let warned = false;
  for (;;) {
    try {
      latest = await readJobSet(client, set, finished);
      for (const j of latest) if (TERMINAL_JOB_STATES.has(j.state)) finished.set(j.id, j);
      warned = false;
      opts.onUpdate(latest);
      if (latest.length && latest.every((j) => TERMINAL_JOB_STATES.has(j.state)))
        return { outcome: "finished", jobs: latest };
      if (!latest.length && "labels" in set) throw new CliError("no job has these labels", EXIT.REJECTED);
    } catch (e) {
      if (!(e instanceof CliError) || e.exitCode !== EXIT.UNAVAILABLE) throw e;
      if (!warned) opts.onNote(`fleetq: ${e.message}; still waiting`);
      warned = true;
    }
    const left = deadline - Date.now();
    if (left <= 0) return { outcome: "timeout", jobs: latest };
    await new Promise((r) => setTimeout(r, Math.min(opts.pollMs ?? 2000, left)));
  }
}

/** "3 jobs: 1 running, 2 succeeded" */
export function jobSetSummary(jobs: readonly JobBrief[]): string {
  const counts = new Map<string, number>();
  for (const j of jobs) counts.set(j.state, (counts.get(j.state) ?? 0) + 1);
  const order: JobState[] = ["PENDING", "ADMITTED", "RUNNING", "SUCCEEDED", "FAILED", "CANCELLED"];
  const parts = order.filter((s) => counts.has(s)).map((s) => `${counts.get(s)} ${s.toLowerCase()}`);
  return `${jobs.length} job${jobs.length === 1 ? "" : "s"}: ${parts.join(", ")}`;
}
