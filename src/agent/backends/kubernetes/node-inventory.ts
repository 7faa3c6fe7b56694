// A Kubernetes Node as the control plane sees it: allocatable cpu/memory/GPUs, the GPU
// model and per-device memory from GPU feature discovery labels, every label (topology
// included), taints, whether new pods may go there, and its GPU devices' topology when the
// fleetq.io/gpu-topology annotation gives it.
import type { V1Node } from "@kubernetes/client-node";
import { parseQuantity } from "../../quantity.js";
import {
  GPU_MEMORY_LABEL,
  GPU_PRODUCT_LABEL,
  GPU_RESOURCE,
  GPU_TOPOLOGY_KEY,
} from "../../../protocol/labels.js";
import type { NodeInventory } from "../types.js";
import { parseGpuTopology } from "./gpu-topology.js";

export function nodeInventory(node: V1Node): NodeInventory {
  const labels = { ...(node.metadata?.labels ?? {}) };
  const allocatable = node.status?.allocatable ?? {};
  const gpus = Math.floor(quantityOr0(allocatable[GPU_RESOURCE]));
  const gpuMemory = Number(labels[GPU_MEMORY_LABEL] ?? 0);
  const gpuDevices = parseGpuTopology(node.metadata?.annotations?.[GPU_TOPOLOGY_KEY], gpus);
  return {
    name: node.metadata?.name ?? "",
    capacity: {
      cpuMillis: Math.round(quantityOr0(allocatable.cpu) * 1000),
      memory: Math.round(quantityOr0(allocatable.memory)),
      gpus,
      gpuMemory: gpus > 0 && Number.isFinite(gpuMemory) ? gpuMemory : 0,
    },
    labels,
    gpuModel: gpus > 0 ? (labels[GPU_PRODUCT_LABEL] ?? null) : null,
    unschedulable: node.spec?.unschedulable === true,
    ready: isReady(node),
    maxPods: allocatable.pods ? Math.floor(quantityOr0(allocatable.pods)) : 110,
    taints: (node.spec?.taints ?? []).map((t) =>
      t.value ? `${t.key}=${t.value}:${t.effect}` : `${t.key}:${t.effect}`,
    ),
    ...(gpuDevices ? { gpuDevices } : {}),
  };
}

function isReady(node: V1Node): boolean {
  const ready = node.status?.conditions?.find((condition) => condition.type === "Ready");
  return ready?.status === "True";
}

/** Never throws: this runs inside watch callbacks, where client-node swallows exceptions. */
function quantityOr0(value: string | undefined): number {
  if (value === undefined) return 0;
  try {
    return parseQuantity(value);
  } catch {
    return 0;
  }
}
