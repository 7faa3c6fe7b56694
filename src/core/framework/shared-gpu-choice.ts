// Which devices a shared-GPU task would take on a node (KAI: GetNodePreferableGpuForSharing):
// walk the device candidates best first, collect as many as the task needs, and note
// whether any of them still has to be released first.
import type { NodeInfo } from "../api/node-info.js";
import type { PodInfo } from "../api/pod-info.js";
import { WHOLE_GPU } from "./callbacks.js";

export interface DeviceChoice {
  groups: string[];
  /** Some chosen device (or the node's CPU/memory/pods) is not idle yet: pipeline. */
  releasing: boolean;
  /** How many of `groups` are devices newly opened for sharing. */
  newGroups: number;
}

export function chooseSharedDevices(
  candidates: readonly string[],
  node: NodeInfo,
  task: PodInfo,
  pipelineOnly: boolean,
  newGroupId: (taken: readonly string[]) => string,
): DeviceChoice | null {
  const out: DeviceChoice = { groups: [], releasing: false, newGroups: 0 };
  const need = task.req.gpuDevices;
  for (const g of candidates) {
    if (g === WHOLE_GPU) {
      out.releasing ||= pipelineOnly || !node.isTaskAllocatable(task);
      out.groups.push(newGroupId(out.groups));
      out.newGroups++;
    } else {
      out.releasing ||= !node.shared.enoughIdleOnGroup(task.req, g) || !node.isTaskAllocatable(task);
      out.groups.push(g);
    }
    if (out.groups.length === need) return out;
  }
  return null;
}
