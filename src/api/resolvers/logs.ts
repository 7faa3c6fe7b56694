// Pod logs: podLogs (what the log holds now) and podLogLines (the log as it is written), read by
// the pod's cluster agent. Authorised like the job's templates for people, without VIEWERs:
// logs carry what programs print, secrets included.
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { type Job, jobPod, type Pod } from "../../store/index.js";
import type { LogRequest, ReplyEntry } from "../../protocol/agent-requests.js";
import { AgentUnavailableError } from "../agent-logs.js";
import { guarded, principalOf } from "../auth.js";
import type { ApiContext } from "../context.js";
import { asArgs, badInput, conflict, forbidden, notFound } from "../errors.js";
import { GraphQLError } from "graphql";
import { clusterStateOf, iso } from "../views.js";

interface LogArgs {
  job: string;
  pod: string;
  tailLines?: number | null;
  sinceSeconds?: number | null;
  previous?: boolean | null;
  timestamps?: boolean | null;
}

/** ADMIN, or a MEMBER whose queue subtrees hold the job (checked once the job is read). */
const people = (ctx: ApiContext) => {
  const p = principalOf(ctx);
  if (p.role !== "ADMIN" && p.role !== "MEMBER")
    throw forbidden(
      `${p.role} token "${p.name}" may not read logs (they may hold secrets): ADMIN or a MEMBER of the job's queue only`,
    );
};

async function requireLogAccess(ctx: ApiContext, job: Job): Promise<void> {
  const p = principalOf(ctx);
  if (p.role === "ADMIN") return;
  const tree = await ctx.loaders.queueTree();
  if (!p.queues.some((root) => tree.isWithin(job.queueName, root)))
    throw forbidden(
      `MEMBER token "${p.name}" may read logs of jobs in ${p.queues.join(", ")} and below, not of ${job.queueName}`,
    );
}

/** The request for the pod's log, after every check that can be made without its cluster. */
async function logRequest(
  ctx: ApiContext,
  a: LogArgs,
  follow: boolean,
): Promise<{ cluster: string; request: LogRequest }> {
  if (!z.uuid().safeParse(a.job).success) throw badInput("job", `job: "${a.job}" is not a job id`);
  if (a.tailLines != null && (!Number.isInteger(a.tailLines) || a.tailLines < 0))
    throw badInput("tailLines", "tailLines: must be a whole number >= 0");
  if (a.sinceSeconds != null && (!Number.isInteger(a.sinceSeconds) || a.sinceSeconds < 1))
    throw badInput("sinceSeconds", "sinceSeconds: must be a whole number of seconds >= 1");
  const job = await ctx.loaders.job.load(a.job);
  if (!job) throw notFound(`job ${a.job} not found`, "job");
  await requireLogAccess(ctx, job);
  const pod = await jobPod(ctx.store, job.id, a.pod);
  if (!pod) throw notFound(`job ${job.name} has no pod "${a.pod}"`, "pod");
  if (!job.clusterName)
    throw conflict(`job ${job.name} has not been placed on a cluster: pod ${pod.name} has no log yet`);
  const cluster = await ctx.loaders.cluster.load(job.clusterName);
  if (cluster && clusterStateOf(cluster) === "LOST")
    throw conflict(
      `cluster ${cluster.name} is LOST (its agent has been silent since ${iso(cluster.heartbeatAt) ?? "it registered"}): the logs of its pods cannot be read until it reports again`,
    );
  const previous = a.previous ?? false;
  if (previous && job.restarts === 0)
    throw badInput("previous", `previous: job ${job.name} has not restarted: it has no previous attempt`);
  if (!previous && notStarted(pod))
    throw conflict(`pod ${pod.name} of job ${job.name} has not started (${pod.state}): it has no log yet`);
  return {
    cluster: job.clusterName,
    request: {
      id: randomUUID(),
      kind: "logs",
      sentAt: Date.now(),
      job: { id: job.id, name: job.name, namespace: job.namespace, createdInCluster: job.createdInCluster },
      pod: pod.name,
      restarts: previous ? job.restarts - 1 : job.restarts,
      tailLines: a.tailLines ?? null,
      sinceSeconds: a.sinceSeconds ?? null,
      timestamps: a.timestamps ?? false,
      follow,
    },
  };
}

/** A pod that never ran in this attempt has nothing its cluster could show. */
const notStarted = (pod: Pod) =>
  pod.startedAt === null && (pod.state === "PENDING" || pod.state === "PIPELINED" || pod.state === "FAILED");

/** The agent's refusal as the API's error. */
function refusal(entry: Extract<ReplyEntry, { kind: "error" }>, cluster: string): GraphQLError {
  const message = `cluster ${cluster}: ${entry.message}`;
  if (entry.code === "gone") return notFound(message, "pod");
  if (entry.code === "waiting") return conflict(message);
  return new GraphQLError(message, { extensions: { code: "AGENT_UNAVAILABLE" } });
}

const unavailable = (err: unknown) =>
  err instanceof AgentUnavailableError
    ? new GraphQLError(err.message, { extensions: { code: "AGENT_UNAVAILABLE" } })
    : err;

async function podLogs(a: LogArgs, ctx: ApiContext): Promise<string> {
  const { cluster, request } = await logRequest(ctx, a, false);
  let text = "";
  try {
    for await (const entry of ctx.logs.answer(cluster, request)) {
      if (entry.kind === "data") text += entry.text;
      else if (entry.kind === "error") throw refusal(entry, cluster);
    }
  } catch (err) {
    throw unavailable(err);
  }
  return text;
}

/** The answer's text as lines (a piece ends on a line's end), then one that says why it ended. */
async function* logLines(ctx: ApiContext, cluster: string, request: LogRequest, signal: AbortSignal) {
  try {
    for await (const entry of ctx.logs.answer(cluster, request, signal)) {
      if (entry.kind === "error") throw refusal(entry, cluster);
      if (entry.kind === "end") {
        yield { podLogLines: { line: "", end: entry.reason } };
        return;
      }
      const lines = entry.text.endsWith("\n") ? entry.text.slice(0, -1) : entry.text;
      for (const line of lines.split("\n")) yield { podLogLines: { line, end: null } };
    }
  } catch (err) {
    throw unavailable(err);
  }
}

/**
 * A subscription's stream that ends as soon as its subscriber leaves: an async generator's own
 * return() waits until it next yields, which a quiet pod's log may not do for long, holding the
 * read (and the agent's) meanwhile. Leaving aborts the read first.
 */
function cancellable<T>(make: (signal: AbortSignal) => AsyncGenerator<T>): AsyncIterableIterator<T> {
  const left = new AbortController();
  const lines = make(left.signal);
  const iterator: AsyncIterableIterator<T> = {
    next: () => lines.next(),
    return: async (value?: unknown) => {
      left.abort();
      return lines.return(value as T);
    },
    throw: async (err?: unknown) => {
      left.abort();
      return lines.throw(err);
    },
    [Symbol.asyncIterator]: () => iterator,
  };
  return iterator;
}

export const logResolvers = {
  Query: {
    podLogs: guarded(people, asArgs, podLogs),
  },
  Subscription: {
    podLogLines: {
      subscribe: guarded(people, asArgs, async (a: LogArgs, ctx: ApiContext) => {
        const { cluster, request } = await logRequest(ctx, a, true);
        return cancellable((signal) => logLines(ctx, cluster, request, signal));
      }),
    },
  },
};
