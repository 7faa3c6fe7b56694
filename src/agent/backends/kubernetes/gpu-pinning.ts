// Pins a pod we create to the GPU devices the control plane chose: every container that asks
// for nvidia.com/gpu gets NVIDIA_VISIBLE_DEVICES (the NVIDIA container runtime shows it only
// those devices). With per-container counts that add up to the pod's devices, each container
// gets its own slice in order; otherwise each sees all of the pod's devices.
import { GPU_RESOURCE, NVIDIA_VISIBLE_DEVICES } from "../../../protocol/labels.js";
import { parseQuantity } from "../../quantity.js";

type Json = Record<string, unknown>;

function gpuCount(container: Json): number {
  const resources = (container.resources as Json | undefined) ?? {};
  const value =
    ((resources.limits as Json | undefined)?.[GPU_RESOURCE] as string | number | undefined) ??
    ((resources.requests as Json | undefined)?.[GPU_RESOURCE] as string | number | undefined);
  if (value === undefined) return 0;
  try {
    return Math.floor(parseQuantity(String(value)));
  } catch {
    return 0;
  }
}

function withVisibleDevices(container: Json, devices: readonly number[]): Json {
  const env = ((container.env as Json[] | undefined) ?? []).filter((e) => e.name !== NVIDIA_VISIBLE_DEVICES);
  return { ...container, env: [...env, { name: NVIDIA_VISIBLE_DEVICES, value: devices.join(",") }] };
}

/** The containers with NVIDIA_VISIBLE_DEVICES set where they ask for GPUs; unchanged without devices. */
export function pinContainers(containers: readonly Json[], devices: readonly number[]): Json[] {
  if (devices.length === 0) return [...containers];
  const counts = containers.map(gpuCount);
  const split = counts.reduce((a, b) => a + b, 0) === devices.length;
  let next = 0;
  return containers.map((container, i) => {
    const n = counts[i]!;
    if (n === 0) return container;
    const mine = split ? devices.slice(next, next + n) : devices;
    next += n;
    return withVisibleDevices(container, mine);
  });
}
