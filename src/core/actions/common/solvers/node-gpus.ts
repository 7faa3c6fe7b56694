// Idle and releasing GPUs of every node, shared devices and MIG instances included
// (KAI: GetSumOfIdleGPUs / GetSumOfReleasingGPUs). Every victim search reads them for all
// nodes; they are kept per session and recomputed only for nodes that changed since.
import type { Session } from "../../../framework/session.js";

export interface NodeGpus {
  /** By node index. */
  idle: Float64Array;
  releasing: Float64Array;
}

export function nodeGpus(ssn: Session): NodeGpus {
  const nodes = ssn.nodes;
  let c = ssn.memos.nodeGpus;
  if (!c) {
    c = {
      idle: new Float64Array(nodes.length),
      releasing: new Float64Array(nodes.length),
      versions: new Int32Array(nodes.length).fill(-1),
    };
    ssn.memos.nodeGpus = c;
  }
  for (let i = 0; i < nodes.length; i++) {
    const n = nodes[i]!;
    if (c.versions[i] === n.version) continue;
    c.idle[i] = n.gpuIdleWithShared();
    c.releasing[i] = n.gpuReleasingWithShared();
    c.versions[i] = n.version;
  }
  return c;
}
