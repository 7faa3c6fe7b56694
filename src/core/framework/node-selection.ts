// Kubernetes node filters fleetq models: node names (affinity), label requirements
// (node selector / required node affinity), taints and tolerations, GPU model. The predicates
// plugin and the actions' scenario filters both judge nodes by them.
import type { NodeInfo } from "../api/node-info.js";
import type { PodInfo } from "../api/pod-info.js";
import type { LabelRequirement, Taint, Toleration } from "../api/spec.js";

export function matchesRequirement(labels: Record<string, string>, r: LabelRequirement): boolean {
  const v = labels[r.key];
  switch (r.operator) {
    case "In":
      return v !== undefined && (r.values ?? []).includes(v);
    case "NotIn":
      return v === undefined || !(r.values ?? []).includes(v);
    case "Exists":
      return v !== undefined;
    case "DoesNotExist":
      return v === undefined;
  }
}

/** The node satisfies the pod's node names and label requirements; null or the reason. */
export function nodeAffinityError(task: PodInfo, node: NodeInfo): string | null {
  const names = task.spec.nodeNames;
  if (names && names.length > 0 && !names.includes(node.name))
    return "node(s) didn't match Pod's node affinity/selector";
  const sel = task.spec.nodeSelector;
  if (sel)
    for (const r of sel)
      if (!matchesRequirement(node.labels, r)) return "node(s) didn't match Pod's node affinity/selector";
  return null;
}

function tolerates(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.operator === "Exists") return !t.key || t.key === taint.key;
  return t.key === taint.key && (t.value ?? "") === (taint.value ?? "");
}

export function taintError(task: PodInfo, node: NodeInfo): string | null {
  const tolerations = task.spec.tolerations ?? [];
  for (const taint of node.spec.taints) {
    if (taint.effect === "PreferNoSchedule") continue;
    if (!tolerations.some((t) => tolerates(t, taint)))
      return `node(s) had untolerated taint {${taint.key}${taint.value ? `: ${taint.value}` : ""}}`;
  }
  return null;
}

export function gpuModelError(task: PodInfo, node: NodeInfo): string | null {
  const models = task.spec.gpuModels;
  if (!models || models.length === 0 || task.req.isCpuOnly) return null;
  if (node.spec.gpuModel && models.includes(node.spec.gpuModel)) return null;
  return `node(s) didn't have the requested GPU model (${models.join(", ")})`;
}

export function nodeConditionError(node: NodeInfo, task: PodInfo): string | null {
  if (!node.spec.ready) return "node(s) were not ready";
  if (node.spec.unschedulable) {
    const tolerated = (task.spec.tolerations ?? []).some(
      (t) =>
        (t.key === "node.kubernetes.io/unschedulable" || (!t.key && t.operator === "Exists")) &&
        (!t.effect || t.effect === "NoSchedule"),
    );
    if (!tolerated) return "node(s) were unschedulable";
  }
  return null;
}
