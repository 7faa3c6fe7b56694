// Jobs: listing, one job with its pods/events/BindRequests/pending reason, submit and cancel.
import { z } from "zod";
import {
  type BindRequest,
  cancelJob,
  type Job,
  type JobState,
  type JobTask,
  jobsPage,
  MAX_BIND_REQUESTS_PAGE,
  MAX_EVENTS_PAGE,
  MAX_PODS_PAGE,
  naturalCompare,
  type Pod,
  previewJob,
  type SubGroupRow,
  submitJob,
  type SubmitJobInput,
  submitJobs,
  submitWorkload,
  type SubmitWorkloadInput,
  submitWorkloads,
  type TopologyConstraint,
  workloadQueueOf,
} from "../../store/index.js";
import { anyRole, guarded, maySeeTemplate, actorOf, requireQueueAccess } from "../auth.js";
import type { ApiContext } from "../context.js";
import { asArgs, badInput, inInput, inInputs } from "../errors.js";
import { iso, labelsOf, resourcesOf } from "../views.js";
import {
  DEFAULT_RENDEZVOUS_PORT,
  objectsYaml,
  podPlace,
  renderJob,
  rendezvousEnvironment,
  templateOverrides,
} from "../../render/index.js";
import { renderJobOf, restartPolicyView } from "../job-render.js";

const actor = actorOf;
const isUuid = (s: string) => z.uuid().safeParse(s).success;

interface JobsArgs {
  filter?: {
    queue?: string | null;
    state?: JobState | null;
    cluster?: string | null;
    labels?: { key: string; values: string[] }[] | null;
  } | null;
  first?: number | null;
  after?: string | null;
}

async function jobs(a: JobsArgs, ctx: ApiContext) {
  const f = a.filter ?? {};
  let queues: string[] | undefined;
  if (f.queue) {
    const tree = await ctx.loaders.queueTree();
    if (!tree.has(f.queue)) throw badInput("filter.queue", `filter.queue: queue "${f.queue}" does not exist`);
    queues = tree.subtree(f.queue);
  }
  const page = await jobsPage(
    ctx.store,
    { queues, state: f.state ?? undefined, cluster: f.cluster ?? undefined, labels: f.labels ?? undefined },
    a.first ?? 50,
    a.after,
  );
  return {
    edges: page.jobs.map((node, i) => ({ node, cursor: page.cursors[i]! })),
    pageInfo: { hasNextPage: page.hasNextPage, endCursor: page.cursors.at(-1) ?? null },
  };
}

interface PageArgs {
  first?: number | null;
}

/** A nested list's page size, checked against its cap. */
function pageSize(a: PageArgs, max: number): number {
  const first = a.first ?? 0;
  if (!Number.isInteger(first) || first < 0 || first > max)
    throw badInput("first", `first: must be between 0 and ${max}`);
  return first;
}

const podResources = (p: Pod | JobTask) =>
  resourcesOf({
    cpuMillis: p.cpuMillis,
    memory: p.memory,
    gpu: p.gpus + p.gpuFraction,
    gpuMemory: p.gpuMemory,
  });

export const jobResolvers = {
  Query: {
    jobs: guarded(anyRole, asArgs, jobs),
    job: guarded(anyRole, asArgs, (a: { id: string }, ctx) => {
      if (!isUuid(a.id)) throw badInput("id", `id: "${a.id}" is not a job id`);
      return ctx.loaders.job.load(a.id);
    }),
    renderJob: guarded(
      anyRole,
      inInput,
      async (a: { input: SubmitJobInput; cluster?: string | null }, ctx) => {
        if (a.cluster && !(await ctx.loaders.cluster.load(a.cluster)))
          throw badInput("cluster", `cluster: cluster "${a.cluster}" does not exist`);
        const { job, tasks } = await previewJob(ctx.store, actor(ctx), a.input);
        return objectsYaml(renderJob(renderJobOf(job, tasks)));
      },
    ),
  },
  Mutation: {
    submitJob: guarded(
      (ctx, a: { input: SubmitJobInput }) => requireQueueAccess(ctx, a.input.queue),
      inInput,
      async (a: { input: SubmitJobInput }, ctx) => (await submitJob(ctx.store, actor(ctx), a.input)).job,
    ),
    submitJobs: guarded(
      async (ctx, a: { inputs: SubmitJobInput[] }) => {
        for (const queue of new Set(a.inputs.map((i) => i.queue))) await requireQueueAccess(ctx, queue);
      },
      inInputs,
      async (a: { inputs: SubmitJobInput[] }, ctx) =>
        (await submitJobs(ctx.store, actor(ctx), a.inputs)).map((r) => r.job),
    ),
    submitWorkload: guarded(
      (ctx, a: { input: SubmitWorkloadInput }) => requireQueueAccess(ctx, workloadQueueOf(a.input) ?? ""),
      inInput,
      async (a: { input: SubmitWorkloadInput }, ctx) =>
        (await submitWorkload(ctx.store, actor(ctx), a.input)).job,
    ),
    submitWorkloads: guarded(
      async (ctx, a: { inputs: SubmitWorkloadInput[] }) => {
        for (const queue of new Set(a.inputs.map((i) => workloadQueueOf(i) ?? "")))
          await requireQueueAccess(ctx, queue);
      },
      inInputs,
      async (a: { inputs: SubmitWorkloadInput[] }, ctx) =>
        (await submitWorkloads(ctx.store, actor(ctx), a.inputs)).map((r) => r.job),
    ),
    cancelJob: guarded(
      async (ctx, a: { id: string }) => {
        const job = isUuid(a.id) ? await ctx.loaders.job.load(a.id) : null;
        if (job) await requireQueueAccess(ctx, job.queueName);
        else await requireQueueAccess(ctx, ""); // unknown job: only roles that may cancel learn that
      },
      asArgs,
      async (a: { id: string }, ctx) => (await cancelJob(ctx.store, actor(ctx), a)).job,
    ),
  },
  Job: {
    queue: (j: Job, _a: unknown, ctx: ApiContext) => ctx.loaders.queue.load(j.queueName),
    cluster: (j: Job, _a: unknown, ctx: ApiContext) =>
      j.clusterName ? ctx.loaders.cluster.load(j.clusterName) : null,
    labels: (j: Job) => labelsOf(j.labels),
    createdAt: (j: Job) => iso(j.createdAt),
    updatedAt: (j: Job) => iso(j.updatedAt),
    startedAt: (j: Job) => iso(j.startedAt),
    finishedAt: (j: Job) => iso(j.finishedAt),
    pods: (j: Job, a: PageArgs & { after?: string | null }, ctx: ApiContext) =>
      ctx.loaders.pods(pageSize(a, MAX_PODS_PAGE), a.after ?? null).load(j.id),
    podStates: (j: Job, _a: unknown, ctx: ApiContext) => ctx.loaders.podStates.load(j.id),
    events: async (j: Job, a: PageArgs, ctx: ApiContext) =>
      ctx.loaders.events(pageSize(a, MAX_EVENTS_PAGE)).load(j.id),
    pendingReason: (j: Job) => (j.state === "PENDING" ? j.pendingReason : null),
    // In the order of their pods' names ("<task>-<index>"), without reading the pods.
    tasks: async (j: Job, _a: unknown, ctx: ApiContext) =>
      [...(await ctx.loaders.tasks.load(j.id))].sort((a, b) => naturalCompare(`${a.name}-0`, `${b.name}-0`)),
    subGroups: (j: Job) => j.subGroups as unknown as SubGroupRow[],
    topology: (j: Job) => j.topology as TopologyConstraint | null,
    clusterSelector: (j: Job) => j.clusterSelector,
    bindRequests: async (j: Job, a: PageArgs, ctx: ApiContext) =>
      (await ctx.loaders.bindRequests(pageSize(a, MAX_BIND_REQUESTS_PAGE)).load(j.id)).map(bindRequestView),
    attempt: (j: Job) => j.restarts + 1,
    workload: async (j: Job, _a: unknown, ctx: ApiContext) => {
      const w = j.workload as { kind: string; apiVersion: string; name: string; manifest: unknown } | null;
      if (!w) return null;
      return { ...w, manifest: (await maySeeTemplate(ctx, j)) ? w.manifest : null };
    },
    restartPolicy: (j: Job) => restartPolicyView(j),
    rendezvousPort: (j: Job) => j.rendezvousPort ?? DEFAULT_RENDEZVOUS_PORT,
    // A workload's pods are its controller's: fleetq sets no environment in them.
    warnings: async (j: Job, _a: unknown, ctx: ApiContext) => {
      if (j.workload || !(await maySeeTemplate(ctx, j))) return [];
      const job = renderJobOf(j, await ctx.loaders.tasks.load(j.id));
      return templateOverrides(job, (i) => `tasks[${i}].template`);
    },
  },
  TaskGroup: {
    resources: (t: JobTask) => podResources(t),
    template: async (t: JobTask, _a: unknown, ctx: ApiContext) => {
      if (t.template === null) return null;
      const job = await ctx.loaders.job.load(t.jobId);
      return job && (await maySeeTemplate(ctx, job)) ? t.template : null;
    },
  },
  Pod: {
    task: (p: Pod) => p.taskName,
    node: (p: Pod) => p.nodeName,
    resources: (p: Pod) => podResources(p),
    startedAt: (p: Pod) => iso(p.startedAt),
    finishedAt: (p: Pod) => iso(p.finishedAt),
    environment: async (p: Pod, _a: unknown, ctx: ApiContext) => {
      const job = await ctx.loaders.job.load(p.jobId);
      if (!job || job.createdInCluster || job.workload || !(await maySeeTemplate(ctx, job))) return null;
      const render = renderJobOf(job, await ctx.loaders.tasks.load(p.jobId));
      const place = podPlace(render, p.name);
      return place ? rendezvousEnvironment(render, place, job.restarts) : null;
    },
  },
};

export const bindRequestView = (b: BindRequest & { pod: { name: string } }) => ({
  id: b.id,
  kind: b.kind,
  cluster: b.clusterName,
  job: b.jobId,
  pod: b.pod.name,
  node: b.nodeName,
  gpuGroups: b.gpuGroups,
  gpuDevices: b.gpuDevices,
  reason: b.reason,
  state: b.state,
  attempts: b.attempts,
  lastError: b.lastError,
  generation: Number(b.generation),
  createdAt: iso(b.createdAt),
  dispatchedAt: iso(b.dispatchedAt),
  completedAt: iso(b.completedAt),
});
