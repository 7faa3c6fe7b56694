// predicates: may this pod run on this node at all? The queue's capacity on the node,
// GPU kind vs node (MIG strategies, legacy MIG), GPU-memory sync, free pod slots, node
// condition, node affinity/selector, taints, inter-pod (anti-)affinity and GPU model —
// in that order, the first failure being the reason (KAI: plugins/predicates).
import type { NodeInfo } from "../../api/node-info.js";
import type { PodInfo } from "../../api/pod-info.js";
import type { Plugin, Session } from "../../framework/session.js";
import { chooseSharedDevices } from "../../framework/shared-gpu-choice.js";
import { maxNodeResourcesError } from "./max-node-resources.js";
import {
  gpuModelError,
  nodeAffinityError,
  nodeConditionError,
  taintError,
} from "../../framework/node-selection.js";
import { PodAffinity } from "./pod-affinity.js";

export const name = "predicates";
export const NODE_POD_NUMBER_EXCEEDED = "node(s) pod number exceeded";

export function resourceTypeError(task: PodInfo, node: NodeInfo): string | null {
  const kind = task.req.kind;
  if (task.spec.legacyMig) return `Legacy MIG jobs cannot be scheduled on node ${node.name}`;
  if (task.req.isCpuOnly) return null;
  const mig = node.isMigEnabled;
  if (!mig && kind === "mig") return "MIG job cannot be scheduled on non-MIG node";
  if (mig) {
    if (kind === "mig" && node.legacyMigPods > 0)
      return "MIG job cannot be scheduled on node with legacy MIG jobs";
    const strategy = node.spec.migStrategy;
    if (strategy === "single" && kind !== "regular")
      return "only whole gpu jobs can run on a node with MigStrategy='single'";
    if (strategy === "mixed" && kind !== "mig")
      return "non MIG jobs cant run on a node with MigStrategy='mixed'";
  }
  return null;
}

/** A shared task opening a new device also needs a slot for its reservation pod. */
function maxPodsError(ssn: Session, task: PodInfo, node: NodeInfo): string | null {
  const free = node.idle.pods + node.releasing.pods;
  if (!task.req.isShared) return free > 0 ? null : NODE_POD_NUMBER_EXCEEDED;
  if (!opensNewGroup(ssn, task, node)) return null;
  return free < 2 ? NODE_POD_NUMBER_EXCEEDED : null;
}

const isNumeric = (g: string) => /^-?\d+$/.test(g);

function opensNewGroup(ssn: Session, task: PodInfo, node: NodeInfo): boolean {
  const cands = ssn.ordering.fittingGpus(node, task);
  const NEW = "new";
  const isNew = (gs: string[]) => gs.some((g) => !isNumeric(g));
  const now = chooseSharedDevices(cands, node, task, false, () => NEW);
  if (now && !now.releasing) return isNew(now.groups);
  const later = chooseSharedDevices(cands, node, task, true, () => NEW);
  if (later) return isNew(later.groups);
  return true;
}

export function create(): Plugin {
  return {
    name,
    onSessionOpen(ssn) {
      const affinity = new PodAffinity(ssn);
      const maxNode = maxNodeResourcesError(ssn.nodes);
      ssn.prePredicateFns.push((task) => maxNode(task));
      ssn.predicateFns.push((task, job, node) => {
        const cap = ssn.isTaskAllocationOnNodeOverCapacity(task, job, node);
        if (!cap.schedulable)
          return `node does not have enough capacity. Reason: ${cap.reason ?? ""}, Details: ${cap.message ?? ""}`;
        return (
          resourceTypeError(task, node) ??
          (task.req.gpuMemory > 0 && !node.gpuMemorySynced
            ? `node is not a gpu node or the gpu memory count on the node was not synced yet, task: <${task.namespace}/${task.name}>, node: <${node.name}>`
            : null) ??
          maxPodsError(ssn, task, node) ??
          nodeConditionError(node, task) ??
          nodeAffinityError(task, node) ??
          taintError(task, node) ??
          affinity.error(task, node) ??
          gpuModelError(task, node)
        );
      });
    },
  };
}
