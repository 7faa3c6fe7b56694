// A pod template's request as Kubernetes computes a pod's effective request: its containers'
// requests added up, sidecar init containers (restartPolicy: Always) added to them, and the
// largest of that and each other init container's (with the sidecars started before it). A
// container's request of a resource is its `requests`, else its `limits` (what Kubernetes
// defaults it to); a container that asks for no cpu or no memory gets the default request, as a
// LimitRange's defaultRequest gives it, written into the template. GPUs are nvidia.com/gpu; other
// GPU-like resources are refused (fleetq does not count them).
import { bytes, cpuMillis, parseQuantity } from "../protocol/quantity.js";
import { type DefaultRequest, WorkloadError } from "./types.js";

type Json = Record<string, unknown>;

const GPU = "nvidia.com/gpu";
/** Extended resources fleetq would not count (other GPUs, MIG slices, TPUs, other accelerators):
 * refused rather than handed out uncounted. */
const UNCOUNTED_ACCELERATOR =
  /(^|\/)(gpu|mig-[^/]*|tpu)$|^amd\.com\/|^gpu\.intel\.com\/|^nvidia\.com\/mig-|^google\.com\/|^cloud-tpus\.google\.com\/|^aws\.amazon\.com\/neuron|^habana\.ai\/|^qualcomm\.com\//;

const isObject = (v: unknown): v is Json => v !== null && typeof v === "object" && !Array.isArray(v);

interface Amounts {
  cpuMillis: number;
  memory: number;
  gpus: number;
}

const ZERO: Amounts = { cpuMillis: 0, memory: 0, gpus: 0 };
const add = (a: Amounts, b: Amounts): Amounts => ({
  cpuMillis: a.cpuMillis + b.cpuMillis,
  memory: a.memory + b.memory,
  gpus: a.gpus + b.gpus,
});
const max = (a: Amounts, b: Amounts): Amounts => ({
  cpuMillis: Math.max(a.cpuMillis, b.cpuMillis),
  memory: Math.max(a.memory, b.memory),
  gpus: Math.max(a.gpus, b.gpus),
});

/**
 * The template's pod spec with every container's missing cpu and memory requests written in
 * (`defaults`), and the pod's effective request. `path` is the template's place in the manifest.
 * Throws WorkloadError on a malformed quantity or an uncounted accelerator.
 */
export function effectiveRequest(
  spec: Json,
  defaults: DefaultRequest,
  path: readonly PropertyKey[],
): { spec: Json; request: Amounts } {
  const out = { ...spec };
  const containers = listOf(spec, "containers", path);
  if (!containers.length)
    throw new WorkloadError([...path, "containers"], "a pod template needs at least one container");
  const inits = listOf(spec, "initContainers", path);
  out.containers = containers.map((c, i) => withDefaults(c, defaults, [...path, "containers", i]));
  let regular = ZERO;
  for (const [i, c] of (out.containers as Json[]).entries())
    regular = add(regular, asked(c, [...path, "containers", i]));
  if (!inits.length) return { spec: out, request: regular };
  out.initContainers = inits.map((c, i) => withDefaults(c, defaults, [...path, "initContainers", i]));
  let sidecars = ZERO;
  let initPeak = ZERO;
  for (const [i, c] of (out.initContainers as Json[]).entries()) {
    const ask = asked(c, [...path, "initContainers", i]);
    if (c.restartPolicy === "Always") sidecars = add(sidecars, ask);
    else initPeak = max(initPeak, add(ask, sidecars));
  }
  return { spec: out, request: max(add(regular, sidecars), initPeak) };
}

function listOf(spec: Json, key: "containers" | "initContainers", path: readonly PropertyKey[]): Json[] {
  const list = spec[key];
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw new WorkloadError([...path, key], `${key} must be a list of containers`);
  return list.map((c, i) => {
    if (!isObject(c)) throw new WorkloadError([...path, key, i], "a container must be a mapping");
    return c;
  });
}

/** The container with a cpu and a memory request where it has neither request nor limit. */
function withDefaults(container: Json, defaults: DefaultRequest, path: readonly PropertyKey[]): Json {
  const resources = isObject(container.resources) ? container.resources : {};
  if (container.resources !== undefined && !isObject(container.resources))
    throw new WorkloadError([...path, "resources"], "resources must be a mapping");
  const requests = isObject(resources.requests) ? { ...resources.requests } : {};
  const limits = isObject(resources.limits) ? resources.limits : {};
  let changed = false;
  if (requests.cpu === undefined && limits.cpu === undefined) {
    requests.cpu = `${defaults.cpuMillis}m`;
    changed = true;
  }
  if (requests.memory === undefined && limits.memory === undefined) {
    requests.memory = memoryQuantity(defaults.memory);
    changed = true;
  }
  return changed ? { ...container, resources: { ...resources, requests } } : container;
}

/** Bytes as a Kubernetes quantity, in the largest binary unit that states it exactly ("1Gi"). */
function memoryQuantity(bytes: number): string {
  for (const [unit, size] of [
    ["Ti", 1024 ** 4],
    ["Gi", 1024 ** 3],
    ["Mi", 1024 ** 2],
    ["Ki", 1024],
  ] as const)
    if (bytes >= size && bytes % size === 0) return `${bytes / size}${unit}`;
  return String(bytes);
}

/** What a container asks for: cpu, memory and nvidia.com/gpu (requests, else limits). */
function asked(container: Json, path: readonly PropertyKey[]): Amounts {
  const resources = isObject(container.resources) ? container.resources : {};
  const requests = isObject(resources.requests) ? resources.requests : {};
  const limits = isObject(resources.limits) ? resources.limits : {};
  for (const [field, map] of [
    ["requests", requests],
    ["limits", limits],
  ] as const)
    for (const key of Object.keys(map))
      if (key !== GPU && UNCOUNTED_ACCELERATOR.test(key))
        throw new WorkloadError(
          [...path, "resources", field, key],
          `${key} is not a resource fleetq counts (it counts cpu, memory and ${GPU})`,
        );
  const amount = (key: string, parse: (q: string | number) => number): number => {
    const field = requests[key] !== undefined ? "requests" : "limits";
    const value = requests[key] ?? limits[key];
    if (value === undefined) return 0;
    if (typeof value !== "string" && typeof value !== "number")
      throw new WorkloadError([...path, "resources", field, key], "must be a Kubernetes quantity");
    try {
      const n = parse(value);
      if (!Number.isFinite(n) || n < 0) throw new Error("negative");
      return n;
    } catch {
      throw new WorkloadError([...path, "resources", field, key], `"${value}" is not a Kubernetes quantity`);
    }
  };
  const gpus = amount(GPU, parseQuantity);
  if (!Number.isInteger(gpus))
    throw new WorkloadError(
      [...path, "resources", "limits", GPU],
      `${GPU} must be a whole number of devices`,
    );
  return { cpuMillis: Math.ceil(amount("cpu", cpuMillis)), memory: Math.ceil(amount("memory", bytes)), gpus };
}
