// nodeplacement: binpack (fill the fullest node that fits) or spread (the emptiest),
// separately for GPU pods (by devices) and CPU-only pods (by millicores).
import type { NodeInfo } from "../../api/node-info.js";
import type { PodInfo } from "../../api/pod-info.js";
import type { PluginArguments } from "../../framework/config.js";
import type { Plugin } from "../../framework/session.js";
import { SCORES } from "../scores.js";

export const name = "nodeplacement";

export type Strategy = "binpack" | "spread";

function strategyArg(args: PluginArguments, key: string): Strategy {
  const v = args[key];
  if (v === undefined) return "binpack";
  if (v !== "binpack" && v !== "spread")
    throw new Error(
      `plugin nodeplacement: argument ${key} must be "binpack" or "spread", got ${JSON.stringify(v)}`,
    );
  return v;
}

const resourceOf = (task: PodInfo): "gpu" | "cpu" => (task.req.isCpuOnly ? "cpu" : "gpu");

function capacity(node: NodeInfo, r: "gpu" | "cpu"): number {
  return r === "gpu" ? node.allocatable.gpus : node.allocatable.cpu;
}

/** 9 for the fullest node of the set, 0 for the emptiest, linear between (KAI: pack.go). */
export function binpackScore(min: number, max: number, free: number, total: number): number {
  if (total === 0 || max === 0) return 0;
  if (min === max) return SCORES.maxHighDensity;
  return SCORES.maxHighDensity * (1 - (free - min) / (max - min));
}

/** Free share of the node (KAI: spread.go). */
export function spreadScore(node: NodeInfo, r: "gpu" | "cpu"): number {
  if (r === "gpu") {
    if (node.gpuCount === 0) return 0;
    return (node.gpuIdleWithShared() + node.gpuReleasingWithShared()) / node.gpuCount;
  }
  const total = node.allocatable.cpu;
  return total === 0 ? 0 : node.nonAllocated("cpu") / total;
}

export function create(args: PluginArguments = {}): Plugin {
  const gpu = strategyArg(args, "gpu");
  const cpu = strategyArg(args, "cpu");
  const strategy = (r: "gpu" | "cpu") => (r === "gpu" ? gpu : cpu);
  let min = 0;
  let max = 0;
  return {
    name,
    onSessionOpen(ssn) {
      ssn.placement = {
        maxScore: SCORES.maxHighDensity,
        resourceOf,
        preOrder(task, nodes) {
          const r = resourceOf(task);
          if (strategy(r) !== "binpack") return;
          min = Number.MAX_VALUE;
          max = 0;
          for (const n of nodes) {
            if (capacity(n, r) === 0) continue;
            const free = n.nonAllocated(r);
            if (free < min) min = free;
            if (free > max) max = free;
          }
        },
        score(task, node) {
          const r = resourceOf(task);
          if (strategy(r) === "binpack")
            return binpackScore(min, max, node.nonAllocated(r), capacity(node, r));
          return spreadScore(node, r);
        },
        rankKey(task, node) {
          const r = resourceOf(task);
          if (strategy(r) === "binpack") return capacity(node, r) === 0 ? null : node.nonAllocated(r);
          if ((r === "gpu" ? node.gpuCount : node.allocatable.cpu) === 0) return null;
          return -spreadScore(node, r);
        },
      };
    },
  };
}
