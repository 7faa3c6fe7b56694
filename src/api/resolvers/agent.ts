// The agents' side of the API: inventory, pod phases, BindRequest results, pod groups created
// in the cluster; and the outbox view.
import {
  bindRequestsOfCluster,
  type BindRequestState,
  reportBindResult,
  type ReportBindResultInput,
  reportNodes,
  type ReportNodesInput,
  reportPodGroups,
  type ReportPodGroupsInput,
  reportPodStatus,
  type ReportPodStatusInput,
} from "../../store/index.js";
import { adminOrAgentOf, agentOf, guarded } from "../auth.js";
import type { ApiContext } from "../context.js";
import { asArgs, badInput } from "../errors.js";
import { bindRequestView } from "./jobs.js";
import { z } from "zod";
import {
  jobTemplates,
  type ReportPodInventoryInput,
  reportPodInventory,
  type ReportWorkloadStatusInput,
  reportWorkloadStatus,
} from "../../store/index.js";
import { actorOf, principalOf } from "../auth.js";
import { forbidden, notFound } from "../errors.js";
import { renderJobOf } from "../job-render.js";
import { resourcesOf } from "../views.js";
import { bindRequestKey } from "../../protocol/bind-request.js";

const agentActor = (ctx: ApiContext) => ({ name: `agent:${ctx.principal!.name}` });
/** reportPodGroups is open to ADMINs too (e.g. to end a group whose agent is gone). */
const reporterActor = (ctx: ApiContext) => (ctx.principal!.role === "AGENT" ? agentActor(ctx) : actorOf(ctx));
const byCluster = (a: { cluster: string }) => a.cluster;
/** ADMIN or an AGENT (which cluster is checked once the job is read). */
const adminOrAnyAgent = (ctx: ApiContext) => {
  const p = principalOf(ctx);
  if (p.role !== "ADMIN" && p.role !== "AGENT")
    throw forbidden(
      `${p.role} token "${p.name}" may not read pod templates: ADMIN or the job's cluster's AGENT only`,
    );
};

export const agentResolvers = {
  Query: {
    jobTemplates: guarded(adminOrAnyAgent, asArgs, async (a: { job: string }, ctx) => {
      if (!z.uuid().safeParse(a.job).success) throw badInput("job", `job: "${a.job}" is not a job id`);
      const found = await jobTemplates(ctx.store, a.job);
      if (!found) throw notFound(`job ${a.job} not found`, "job");
      // Templates may hold what only the job's cluster is to see.
      adminOrAgentOf(() => found.cluster ?? "(none)")(ctx, a);
      return found.tasks.map((t) => ({ task: t.name, template: t.template }));
    }),
    agentBindKey: guarded(agentOf(byCluster), asArgs, async (a: { cluster: string }, ctx) =>
      bindRequestKey(ctx.bindSecret, a.cluster),
    ),
    jobRenderSpec: guarded(adminOrAnyAgent, asArgs, async (a: { job: string }, ctx) => {
      if (!z.uuid().safeParse(a.job).success) throw badInput("job", `job: "${a.job}" is not a job id`);
      const job = await ctx.loaders.job.load(a.job);
      if (!job) throw notFound(`job ${a.job} not found`, "job");
      // Templates may hold what only the job's cluster is to see.
      adminOrAgentOf(() => job.clusterName ?? "(none)")(ctx, a);
      const render = renderJobOf(job, await ctx.loaders.tasks.load(job.id));
      return {
        ...render,
        job: render.id,
        tasks: render.tasks.map((t) => ({
          ...t,
          extendedResources: t.resources.extendedResources ?? {},
          resources: resourcesOf({
            cpuMillis: t.resources.cpuMillis,
            memory: BigInt(t.resources.memory),
            gpu: t.resources.gpus + t.resources.gpuFraction,
            gpuMemory: t.resources.gpuMemory,
          }),
        })),
      };
    }),
    bindRequests: guarded(
      adminOrAgentOf(byCluster),
      asArgs,
      async (a: { cluster: string; state?: BindRequestState | null; first?: number | null }, ctx) => {
        const first = a.first ?? 100;
        if (first < 0 || first > 1000) throw badInput("first", "first: must be between 0 and 1000");
        const rows = await bindRequestsOfCluster(ctx.store, a.cluster, a.state ?? null, first);
        return rows.map(bindRequestView);
      },
    ),
  },
  Mutation: {
    reportNodes: guarded(agentOf(byCluster), asArgs, (a: ReportNodesInput, ctx) =>
      reportNodes(ctx.store, agentActor(ctx), a),
    ),
    reportPodStatus: guarded(agentOf(byCluster), asArgs, (a: ReportPodStatusInput, ctx) =>
      reportPodStatus(ctx.store, agentActor(ctx), a),
    ),
    reportBindResult: guarded(agentOf(byCluster), asArgs, (a: ReportBindResultInput, ctx) =>
      reportBindResult(ctx.store, agentActor(ctx), a),
    ),
    reportPodInventory: guarded(agentOf(byCluster), asArgs, (a: ReportPodInventoryInput, ctx) =>
      reportPodInventory(ctx.store, agentActor(ctx), a),
    ),
    reportPodGroups: guarded(adminOrAgentOf(byCluster), asArgs, (a: ReportPodGroupsInput, ctx) =>
      reportPodGroups(ctx.store, reporterActor(ctx), a),
    ),
    reportWorkloadStatus: guarded(agentOf(byCluster), asArgs, (a: ReportWorkloadStatusInput, ctx) =>
      reportWorkloadStatus(ctx.store, agentActor(ctx), a),
    ),
  },
};
