// The agents' side of the API: inventory, pod phases, BindRequest results, pod groups created
// in the cluster; and the outbox view.
import { type ReportPodInventoryInput, reportPodInventory } from "../../store/index.js";
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

const agentActor = (ctx: ApiContext) => ({ name: `agent:${ctx.principal!.name}` });
/** reportPodGroups is open to ADMINs too (e.g. to end a group whose agent is gone). */
const reporterActor = (ctx: ApiContext) =>
  ctx.principal!.role === "AGENT" ? agentActor(ctx) : { name: ctx.principal!.name };
const byCluster = (a: { cluster: string }) => a.cluster;

export const agentResolvers = {
  Query: {
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
  },
};
