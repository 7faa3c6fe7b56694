// Pins a pod we create to the GPU devices the control plane chose: every container that asks
// for nvidia.com/gpu gets NVIDIA_VISIBLE_DEVICES (the NVIDIA container runtime shows it only
// those devices). With per-container counts that add up to the pod's devices, each container
// gets its own slice in order; otherwise each sees all of the pod's devices. Every other
// container (init containers too) gets NVIDIA_VISIBLE_DEVICES=void: on nodes whose runtime
// exposes GPUs by that variable, a container asking for none would otherwise see whatever its
// template's environment names ("all").
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
  const value = devices.length ? devices.join(",") : NO_GPU_DEVICES;
  return { ...container, env: [...env, { name: NVIDIA_VISIBLE_DEVICES, value }] };
}

/** NVIDIA_VISIBLE_DEVICES' value for "no GPU" (the NVIDIA container runtime then mounts none). */
export const NO_GPU_DEVICES = "void";

/**
 * The containers with NVIDIA_VISIBLE_DEVICES set: where they ask for GPUs, the devices chosen;
 * elsewhere void. In a shared-GPU pod (`shared`: a fraction or GPU memory of a device, no
 * nvidia.com/gpu asked), every container sees the chosen devices.
 */
export function pinContainers(
  containers: readonly Json[],
  devices: readonly number[],
  shared = false,
): Json[] {
  const counts = containers.map(gpuCount);
  const asked = counts.reduce((a, b) => a + b, 0);
  if (shared && devices.length > 0) return containers.map((c) => withVisibleDevices(c, devices));
  const split = asked === devices.length;
  let next = 0;
  return containers.map((container, i) => {
    const n = counts[i]!;
    if (n === 0 || devices.length === 0) return withVisibleDevices(container, []);
    const mine = split ? devices.slice(next, next + n) : devices;
    next += n;
    return withVisibleDevices(container, mine);
  });
}

/** Init containers run one at a time (sidecars aside) before the app containers: one asking for
 * GPUs sees the pod's devices, every other none. */
export const pinInitContainers = (containers: readonly Json[], devices: readonly number[]): Json[] =>
  containers.map((c) => withVisibleDevices(c, gpuCount(c) > 0 ? devices : []));
