// What a pod's containers may use is what its task declared: the control plane refuses a
// template whose containers ask for more, and the agent writes every container's requests and
// limits of cpu, memory and nvidia.com/gpu from the declared amounts, so what the scheduler
// counts is what the cluster gives.
import { bytes, cpuMillis, parseQuantity } from "./quantity.js";

export const GPU_RESOURCE = "nvidia.com/gpu";

type Json = Record<string, unknown>;
export type FleetqResource = "cpu" | "memory" | typeof GPU_RESOURCE;
export const FLEETQ_RESOURCES: readonly FleetqResource[] = ["cpu", "memory", GPU_RESOURCE];
/** What any pod may ask for without its cluster's leave: what fleetq counts, and node-local scratch
 * space (ephemeral-storage, which the kubelet evicts a pod for overusing). Every other resource
 * (extended resources, hugepages) must be declared by the task and allowed by the cluster. */
export const NATIVE_RESOURCES: ReadonlySet<string> = new Set([...FLEETQ_RESOURCES, "ephemeral-storage"]);

/** A pod's declared resources: millicores, bytes, whole GPU devices (shared GPUs go by annotation). */
export interface DeclaredResources {
  cpuMillis: number;
  memory: number;
  gpus: number;
}

const declaredOf = (d: DeclaredResources, key: FleetqResource): number =>
  key === "cpu" ? d.cpuMillis : key === "memory" ? d.memory : d.gpus;

const inUnits = (key: FleetqResource, q: string | number): number =>
  key === "cpu" ? cpuMillis(q) : key === "memory" ? bytes(q) : parseQuantity(q);

const asQuantity = (key: FleetqResource, amount: number): string =>
  key === "cpu" ? `${amount}m` : String(amount);

const describe = (key: FleetqResource, amount: number): string =>
  key === "cpu" ? `${amount}m cpu` : key === "memory" ? `${amount} bytes of memory` : `${amount} GPU(s)`;

const obj = (v: unknown): Json =>
  v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Json) : {};
const containersOf = (spec: Json, list: "containers" | "initContainers"): Json[] =>
  Array.isArray(spec[list]) ? (spec[list] as unknown[]).map(obj) : [];

interface Ask {
  amount: number;
  /** requests or limits: whichever asks more */
  field: "requests" | "limits";
}

/** A container's ask of one resource: the larger of its request and limit; null when it sets
 * neither. Throws on a malformed quantity, naming the field. */
export function containerAsk(container: Json, key: FleetqResource): Ask | null {
  const resources = obj(container.resources);
  let ask: Ask | null = null;
  for (const field of ["requests", "limits"] as const) {
    const value = obj(resources[field])[key];
    if (value === undefined || value === null) continue;
    if (typeof value !== "string" && typeof value !== "number")
      throw new ResourceFieldError([field, key], "must be a Kubernetes quantity");
    let amount: number;
    try {
      amount = inUnits(key, value);
    } catch {
      throw new ResourceFieldError([field, key], `"${value}" is not a Kubernetes quantity`);
    }
    if (!Number.isFinite(amount) || amount < 0)
      throw new ResourceFieldError([field, key], `"${value}" is not a non-negative quantity`);
    if (!ask || amount > ask.amount) ask = { amount, field };
  }
  return ask;
}

class ResourceFieldError extends Error {
  constructor(
    readonly path: PropertyKey[],
    message: string,
  ) {
    super(message);
  }
}

export interface OverAsk {
  /** Inside the pod spec, e.g. ["containers", 0, "resources", "limits", "nvidia.com/gpu"]. */
  path: PropertyKey[];
  message: string;
}

/** The first container field of a pod spec asking for more than the task declared (regular
 * containers run together, so their asks add up; init containers run alone, one at a time). */
export function resourceOverAsk(spec: Json, declared: DeclaredResources): OverAsk | null {
  for (const key of FLEETQ_RESOURCES) {
    const limit = declaredOf(declared, key);
    for (const list of ["containers", "initContainers"] as const) {
      let sum = 0;
      for (const [i, c] of containersOf(spec, list).entries()) {
        let ask: Ask | null;
        try {
          ask = containerAsk(c, key);
        } catch (e) {
          const err = e as ResourceFieldError;
          return { path: [list, i, "resources", ...err.path], message: err.message };
        }
        if (!ask) continue;
        sum = list === "containers" ? sum + ask.amount : ask.amount;
        if (sum > limit) {
          const what = list === "containers" ? "the containers ask" : "this init container asks";
          return {
            path: [list, i, "resources", ask.field, key],
            message: `${what} for ${describe(key, sum)} but the task declares ${describe(key, limit)} per pod (resources are fleetq's: declare them in the task's resources)`,
          };
        }
      }
    }
  }
  return null;
}

function setResource(container: Json, key: FleetqResource, amount: number | null): Json {
  const resources = obj(container.resources);
  const requests = { ...obj(resources.requests) };
  const limits = { ...obj(resources.limits) };
  delete requests[key];
  delete limits[key];
  if (amount !== null && amount > 0) {
    requests[key] = asQuantity(key, amount);
    limits[key] = asQuantity(key, amount);
  }
  return { ...container, resources: { ...resources, requests, limits } };
}

/** Splits `total` among `n` containers in whole units, the first taking the rest. */
function split(total: number, n: number): number[] {
  const each = Math.floor(total / n);
  return Array.from({ length: n }, (_, i) => (i === 0 ? total - each * (n - 1) : each));
}

/** The regular containers with cpu, memory and nvidia.com/gpu requests = limits adding up to the
 * declared amounts: each container keeps the share it asks for; the rest goes to the containers
 * that ask for none (GPUs: to the first of them only), or to the first container. A resource
 * declared 0 is taken off every container. */
export function declaredContainerResources(containers: readonly Json[], declared: DeclaredResources): Json[] {
  let out = [...containers];
  for (const key of FLEETQ_RESOURCES) {
    const total = declaredOf(declared, key);
    let asks = out.map((c) => safeAsk(c, key));
    // A template asking for more than declared never passed the control plane; if one arrives
    // anyway, its own figures are ignored.
    const asked = (list: (number | null)[]) => list.reduce<number>((n, a) => n + (a ?? 0), 0);
    if (asked(asks) > total) asks = asks.map(() => null);
    const rest = total - asked(asks);
    const open = asks.flatMap((a, i) => (a === null ? [i] : []));
    const shares = asks.map((a) => a ?? 0);
    if (open.length === 0) shares[0] = (shares[0] ?? 0) + rest;
    else if (key === GPU_RESOURCE) shares[open[0]!] = rest;
    else
      split(rest, open.length).forEach((s, j) => {
        shares[open[j]!] = s;
      });
    out = out.map((c, i) => setResource(c, key, total > 0 ? shares[i]! : null));
  }
  return out;
}

/** Init containers run alone: each gets what it asks for up to the declared amount (cpu and
 * memory: the declared amount when it asks for none; GPUs only when it asks). */
export function declaredInitContainerResources(
  containers: readonly Json[],
  declared: DeclaredResources,
): Json[] {
  return containers.map((c) => {
    let out = c;
    for (const key of FLEETQ_RESOURCES) {
      const total = declaredOf(declared, key);
      const ask = safeAsk(c, key);
      const amount = ask === null ? (key === GPU_RESOURCE ? 0 : total) : Math.min(ask, total);
      out = setResource(out, key, total > 0 ? amount : null);
    }
    return out;
  });
}

function safeAsk(c: Json, key: FleetqResource): number | null {
  try {
    const ask = containerAsk(c, key);
    return ask ? Math.ceil(ask.amount) : null;
  } catch {
    return null;
  }
}
