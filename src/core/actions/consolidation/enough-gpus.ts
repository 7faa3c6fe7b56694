// Consolidation's pre-check (KAI: actions/utils IsEnoughGPUsAllocatableForJob): the
// cluster's idle plus releasing GPUs, and GPU memory, cover what the job's attempt asks.
import type { NodeInfo } from "../../api/node-info.js";
import type { JobInfo } from "../../api/podgroup-info.js";
import { migProfile } from "../../api/resources.js";
import type { Session } from "../../framework/session.js";
import { tasksToAllocate } from "../../framework/tasks-to-allocate.js";

/** Idle and releasing GPU memory of a node (MiB): free parts of shared devices plus whole devices. */
function availableGpuMemory(node: NodeInfo): number {
  let mem = 0;
  for (const used of node.shared.allocatedMemory.values()) if (used > 0) mem += node.gpuMemory - used;
  for (const [g, rel] of node.shared.releasingMemory)
    if (rel > 0 && !node.shared.isReleasingFromSharedTasks(g)) mem += rel;
  mem += Math.trunc(node.idle.gpusWithMig()) * node.gpuMemory;
  mem += Math.trunc(node.releasing.gpusWithMig()) * node.gpuMemory;
  return mem;
}

export function enoughGpusInCluster(ssn: Session, job: JobInfo): boolean {
  let gpus = 0;
  let memory = 0;
  for (const node of ssn.nodes) {
    if (!node.spec.ready) continue;
    gpus += node.gpuIdleWithShared() + node.gpuReleasingWithShared();
    memory += availableGpuMemory(node);
  }
  let needGpus = 0;
  let needMemory = 0;
  for (const t of tasksToAllocate(ssn, job, false)) {
    needGpus += t.req.gpus;
    needMemory += t.req.gpuMemory;
    if (t.req.mig)
      for (const [k, v] of t.req.mig) {
        const p = migProfile(k);
        if (p) {
          needGpus += p.gpus * v;
          needMemory += p.memoryGb * v;
        }
      }
  }
  return gpus >= needGpus && memory >= needMemory;
}
