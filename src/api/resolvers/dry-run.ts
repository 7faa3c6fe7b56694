// dryRunSubmit and its kin: what submitting jobs (or manifests) would do now, storing nothing.
// The same authorization and checks as the submits they mirror; the store previews the jobs, the
// API's dry runs (../dry-runs.ts) plan and answer.
import type { DryRunAnswer } from "../../../workers/admission/dry-run.js";
import {
  type PreviewedJob,
  previewCandidates,
  previewWorkloadCandidates,
  type SubmitJobInput,
  type SubmitWorkloadInput,
  workloadQueueOf,
} from "../../store/index.js";
import { actorOf, guarded, requireQueueAccess } from "../auth.js";
import type { ApiContext } from "../context.js";
import { inInput, inInputs } from "../errors.js";
import { iso } from "../views.js";

/** Every queue the inputs name must be the caller's to submit to. */
const mayDryRun =
  <I>(queueOf: (input: I) => string) =>
  async (ctx: ApiContext, a: { input?: I; inputs?: I[] }) => {
    const inputs = a.inputs ?? (a.input === undefined ? [] : [a.input]);
    for (const queue of new Set(inputs.map(queueOf))) await requireQueueAccess(ctx, queue);
  };

const jobQueue = (i: SubmitJobInput) => i.queue;
const workloadQueueName = (i: SubmitWorkloadInput) => workloadQueueOf(i) ?? "";

async function answers(ctx: ApiContext, previewed: PreviewedJob[]) {
  const planned = await ctx.dryRuns.run(previewed);
  return planned.map((a, i) => view(previewed[i]!, a));
}

function view(p: PreviewedJob, a: DryRunAnswer) {
  const at = (ms: number | null) => (ms === null ? null : iso(new Date(ms)));
  return {
    name: p.job.name,
    queue: p.job.queueName,
    cluster: a.cluster,
    named: a.named,
    tier: a.tier,
    message: a.message,
    estimatedStart: at(a.estimatedStart),
    estimatedCluster: a.estimatedCluster,
    clusters: a.clusters.map((c) => ({ ...c, estimatedStart: at(c.estimatedStart) })),
    evictions: a.evictions.map((e) => ({ ...e, at: at(e.at) })),
  };
}

export const dryRunResolvers = {
  Query: {
    dryRunSubmit: guarded(mayDryRun(jobQueue), inInput, async (a: { input: SubmitJobInput }, ctx) => {
      const [one] = await answers(ctx, await previewCandidates(ctx.store, actorOf(ctx), [a.input]));
      return one;
    }),
    dryRunSubmitJobs: guarded(mayDryRun(jobQueue), inInputs, async (a: { inputs: SubmitJobInput[] }, ctx) =>
      answers(ctx, await previewCandidates(ctx.store, actorOf(ctx), a.inputs)),
    ),
    dryRunSubmitWorkload: guarded(
      mayDryRun(workloadQueueName),
      inInput,
      async (a: { input: SubmitWorkloadInput }, ctx) => {
        const [one] = await answers(ctx, await previewWorkloadCandidates(ctx.store, actorOf(ctx), [a.input]));
        return one;
      },
    ),
    dryRunSubmitWorkloads: guarded(
      mayDryRun(workloadQueueName),
      inInputs,
      async (a: { inputs: SubmitWorkloadInput[] }, ctx) =>
        answers(ctx, await previewWorkloadCandidates(ctx.store, actorOf(ctx), a.inputs)),
    ),
  },
};
