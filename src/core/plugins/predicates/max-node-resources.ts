// A pod asking for more than the largest node has fits nowhere: say so once, up front
// (KAI: k8s_internal/predicates/maxNodeResources.go).
import type { NodeInfo } from "../../api/node-info.js";
import type { PodInfo } from "../../api/pod-info.js";

function fmt(n: number): string {
  return String(Number(n.toFixed(3)));
}

export function maxNodeResourcesError(nodes: readonly NodeInfo[]): (task: PodInfo) => string | null {
  let gpus = 0;
  let cpu = 0;
  let memory = 0;
  const scalars = new Map<string, number>();
  for (const n of nodes) {
    gpus = Math.max(gpus, n.allocatable.gpus);
    cpu = Math.max(cpu, n.allocatable.cpu);
    memory = Math.max(memory, n.allocatable.memory);
    if (n.allocatable.scalars)
      for (const [k, v] of n.allocatable.scalars) scalars.set(k, Math.max(scalars.get(k) ?? 0, v));
  }
  return (task) => {
    const req = task.req;
    const msg = (what: string, max: number, unit: string) =>
      `The pod ${task.namespace}/${task.name} requires GPU: ${fmt(req.gpus)}, CPU: ${fmt(req.cpu / 1000)} (cores), ` +
      `memory: ${fmt(req.memory / 1e9)} (GB). ` +
      (max === 0
        ? `No node in the default node-pool has ${what} resources`
        : `Max ${what} resources available in a single node in the default node-pool is topped at ${fmt(max)}${unit ? ` ${unit}` : ""}`);
    if (req.gpus > gpus) return msg("GPU", gpus, "");
    if (req.cpu > cpu) return msg("CPU", cpu / 1000, "cores");
    if (req.memory > memory) return msg("memory", memory / 1e9, "GB");
    for (const m of [req.mig, req.extended])
      if (m) for (const [k, v] of m) if (v > (scalars.get(k) ?? 0)) return msg(k, 0, "");
    return null;
  };
}
