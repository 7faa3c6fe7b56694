// gpumodelpreference: prefer nodes whose GPU model the pod lists in its
// `preferredGpuModels`, the earlier in the list the better. A soft wish: a pod still
// runs on another model when the preferred ones are full. (The worked example of
// docs/plugins.md.)
import type { NodeInfo } from "../../api/node-info.js";
import type { PodInfo } from "../../api/pod-info.js";
import type { PluginArguments } from "../../framework/config.js";
import type { Plugin } from "../../framework/session.js";

export const name = "gpumodelpreference";

/** Points per preference rank. Node scores come in tiers of 10 (binpack adds at most 9 below them). */
const STEP = 10;

export function create(args: PluginArguments = {}): Plugin {
  const maxRanks = args.maxRanks ?? 9;
  if (typeof maxRanks !== "number" || !Number.isInteger(maxRanks) || maxRanks < 1 || maxRanks > 9)
    throw new Error(
      `plugin ${name}: argument maxRanks must be an integer from 1 to 9 (scores must stay below the availability tier of 100)`,
    );
  const score = (task: PodInfo, node: NodeInfo): number => {
    const wanted = task.spec.preferredGpuModels;
    const model = node.spec.gpuModel;
    if (!wanted || !model || task.req.isCpuOnly) return 0;
    const rank = wanted.indexOf(model);
    if (rank < 0 || rank >= maxRanks) return 0;
    return (maxRanks - rank) * STEP;
  };
  return {
    name,
    onSessionOpen(ssn) {
      ssn.nodeOrderFns.push(score);
    },
  };
}
