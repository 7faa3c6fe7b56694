// Placing a fractional or GPU-memory task on a node (KAI: gpu_sharing/gpuSharing.go):
// take the best device candidates (partly used groups with room, else a whole idle or
// releasing device under a new group id); pipeline when any part is still releasing.
import type { NodeInfo } from "../../api/node-info.js";
import type { PodInfo } from "../../api/pod-info.js";
import type { Session } from "../../framework/session.js";
import { chooseSharedDevices } from "../../framework/shared-gpu-choice.js";
import type { Statement } from "../../framework/statement.js";

export function allocateSharedGpuTask(
  ssn: Session,
  stmt: Statement,
  task: PodInfo,
  node: NodeInfo,
  pipelineOnly: boolean,
): boolean {
  const candidates = ssn.ordering.fittingGpus(node, task);
  const choice = chooseSharedDevices(candidates, node, task, pipelineOnly, (taken) =>
    ssn.newGpuGroupId(node, taken),
  );
  if (!choice) return false;
  if (pipelineOnly || choice.releasing) stmt.pipeline(task, node.name, false, choice.groups);
  else stmt.allocate(task, node.name, choice.groups);
  return true;
}
