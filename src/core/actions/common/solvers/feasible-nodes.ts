// Nodes a victim search may place the preemptor on (KAI: actions/common/feasible_nodes.go):
// every node when some pod of the job needs no GPU; otherwise only nodes with an idle or
// releasing GPU (shared devices and MIG instances included). Nodes of victims join later.
import type { NodeInfo } from "../../../api/node-info.js";
import type { JobInfo } from "../../../api/podgroup-info.js";

export function feasibleNodesForJob(nodes: readonly NodeInfo[], job: JobInfo): NodeInfo[] {
  if (job.pods.some((p) => p.req.isCpuOnly)) return [...nodes];
  return nodes.filter((n) => n.gpuIdleWithShared() > 0 || n.gpuReleasingWithShared() > 0);
}
