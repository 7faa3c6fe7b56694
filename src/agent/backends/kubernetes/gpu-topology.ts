// A Kubernetes Node says nothing about how its GPUs are wired; the `fleetq.io/gpu-topology`
// annotation (written by whoever knows the hardware, e.g. a DaemonSet reading `nvidia-smi topo`)
// does: one JSON entry per device. A missing or unusable annotation means "unknown": the node
// then reports no devices and the control plane leaves device choice to the device plugin.
import type { GpuDevice } from "../types.js";

/** The devices the annotation lists, or null when it is absent or does not describe `gpus`
 * devices (not JSON, not a list, bad fields, duplicate indices, another count). Never throws:
 * this runs inside watch callbacks. */
export function parseGpuTopology(annotation: string | undefined, gpus: number): GpuDevice[] | null {
  if (annotation === undefined || gpus <= 0) return null;
  let value: unknown;
  try {
    value = JSON.parse(annotation);
  } catch {
    return null;
  }
  if (!Array.isArray(value) || value.length !== gpus) return null;
  const devices: GpuDevice[] = [];
  const seen = new Set<number>();
  for (const entry of value) {
    const device = deviceOf(entry);
    if (!device || seen.has(device.index)) return null;
    seen.add(device.index);
    devices.push(device);
  }
  return devices.sort((a, b) => a.index - b.index);
}

function deviceOf(entry: unknown): GpuDevice | null {
  if (entry === null || typeof entry !== "object") return null;
  const { index, nvlinkDomain, numaNode } = entry as Record<string, unknown>;
  const wholeNumber = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v) && v >= 0;
  if (!wholeNumber(index)) return null;
  if (
    nvlinkDomain !== undefined &&
    nvlinkDomain !== null &&
    (typeof nvlinkDomain !== "string" || !nvlinkDomain)
  )
    return null;
  if (numaNode !== undefined && numaNode !== null && !wholeNumber(numaNode)) return null;
  return {
    index,
    ...(typeof nvlinkDomain === "string" ? { nvlinkDomain } : {}),
    ...(wholeNumber(numaNode) ? { numaNode } : {}),
  };
}
