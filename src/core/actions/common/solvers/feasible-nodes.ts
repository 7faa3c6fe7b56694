// Nodes a victim search may place the preemptor on (KAI: actions/common/feasible_nodes.go):
// every node when some pod of the job needs no GPU; otherwise only nodes with an idle or
// releasing GPU (shared devices and MIG instances included). Nodes of victims join later.
import type { NodeInfo } from "../../../api/node-info.js";
import type { JobInfo } from "../../../api/podgroup-info.js";
import type { Session } from "../../../framework/session.js";
import { nodeGpus } from "./node-gpus.js";

export function feasibleNodesForJob(ssn: Session, job: JobInfo): NodeInfo[] {
  if (job.pods.some((p) => p.req.isCpuOnly)) return [...ssn.nodes];
  const { idle, releasing } = nodeGpus(ssn);
  return ssn.nodes.filter((n) => idle[n.index]! > 0 || releasing[n.index]! > 0);
}
