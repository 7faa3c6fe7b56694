// What a pod's containers may use is what its task declared: the control plane refuses a
// template whose pod asks for more (computed as Kubernetes computes a pod's request), and the agent
// writes every container's requests and limits of cpu, memory, nvidia.com/gpu and the declared
// extended resources from the declared amounts, so what the scheduler counts is what the cluster
// gives.
import { bytes, cpuMillis, parseQuantity } from "./quantity.js";

export const GPU_RESOURCE = "nvidia.com/gpu";

type Json = Record<string, unknown>;
export type FleetqResource = "cpu" | "memory" | typeof GPU_RESOURCE;
export const FLEETQ_RESOURCES: readonly FleetqResource[] = ["cpu", "memory", GPU_RESOURCE];
/** What any pod may ask for without its cluster's leave: what fleetq counts, and node-local scratch
 * space (ephemeral-storage, which the kubelet evicts a pod for overusing). Every other resource
 * (extended resources, hugepages) must be declared by the task and allowed by the cluster. */
export const NATIVE_RESOURCES: ReadonlySet<string> = new Set([...FLEETQ_RESOURCES, "ephemeral-storage"]);
/** Not counted by fleetq, not limited by it either. */
const UNLIMITED = "ephemeral-storage";

/** A pod's declared resources: millicores, bytes, whole GPU devices (shared GPUs go by
 * annotation), and {name: count} of extended resources. */
export interface DeclaredResources {
  cpuMillis: number;
  memory: number;
  gpus: number;
  extendedResources?: Readonly<Record<string, number>>;
}

const declaredOf = (d: DeclaredResources, key: string): number =>
  key === "cpu"
    ? d.cpuMillis
    : key === "memory"
      ? d.memory
      : key === GPU_RESOURCE
        ? d.gpus
        : (d.extendedResources?.[key] ?? 0);

const inUnits = (key: string, q: string | number): number =>
  key === "cpu" ? cpuMillis(q) : key === "memory" ? bytes(q) : parseQuantity(q);

const asQuantity = (key: string, amount: number): string => (key === "cpu" ? `${amount}m` : String(amount));

const describe = (key: string, amount: number): string =>
  key === "cpu"
    ? `${amount}m cpu`
    : key === "memory"
      ? `${amount} bytes of memory`
      : key === GPU_RESOURCE
        ? `${amount} GPU(s)`
        : `${amount} ${key}`;

/** Whole-unit resources go to one container (GPUs, extended resources); cpu and memory split. */
const isDevice = (key: string): boolean => key !== "cpu" && key !== "memory";

const obj = (v: unknown): Json =>
  v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Json) : {};
const containersOf = (spec: Json, list: "containers" | "initContainers"): Json[] =>
  Array.isArray(spec[list]) ? (spec[list] as unknown[]).map(obj) : [];
/** A sidecar: an init container that keeps running beside the app containers. */
export const isSidecar = (c: Json): boolean => c.restartPolicy === "Always";

interface Ask {
  amount: number;
  /** requests or limits: whichever asks more */
  field: "requests" | "limits";
}

/** A container's ask of one resource: the larger of its request and limit (Kubernetes takes the
 * limit for a request left unset); null when it sets neither. Throws on a malformed quantity,
 * naming the field. */
export function containerAsk(container: Json, key: string): Ask | null {
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

/** Every resource name the pod spec's containers (and the pod itself) ask for. */
function askedNames(spec: Json): Set<string> {
  const names = new Set<string>();
  const add = (resources: unknown) => {
    for (const field of ["requests", "limits"])
      for (const k of Object.keys(obj(obj(resources)[field]))) names.add(k);
  };
  add(spec.resources);
  for (const list of ["containers", "initContainers"] as const)
    for (const c of containersOf(spec, list)) add(c.resources);
  return names;
}

interface Contribution {
  /** Inside the pod spec: the container whose ask makes the figure. */
  path: PropertyKey[];
  ask: Ask;
  /** The pod's figure once this container counts. */
  total: number;
  what: string;
}

/**
 * The pod's request of `key` as Kubernetes computes it, step by step: the app containers and the
 * sidecars add up (they run together); a regular init container runs with the sidecars started
 * before it; the pod asks for the largest of these. Yields each step's figure with the container
 * that makes it, so the first one over the declared amount can be named.
 */
function* requestSteps(spec: Json, key: string): Generator<Contribution> {
  let running = 0;
  for (const [i, c] of containersOf(spec, "containers").entries()) {
    const ask = askAt(c, ["containers", i], key);
    if (!ask) continue;
    running += ask.amount;
    yield {
      path: ["containers", i, "resources", ask.field, key],
      ask,
      total: running,
      what: "the containers ask",
    };
  }
  let sidecars = 0;
  for (const [i, c] of containersOf(spec, "initContainers").entries()) {
    const ask = askAt(c, ["initContainers", i], key);
    if (!ask) continue;
    const path = ["initContainers", i, "resources", ask.field, key];
    if (isSidecar(c)) {
      sidecars += ask.amount;
      running += ask.amount;
      yield { path, ask, total: running, what: "the containers and sidecars ask" };
    } else
      yield {
        path,
        ask,
        total: ask.amount + sidecars,
        what: "this init container (with the sidecars before it) asks",
      };
  }
}

/** containerAsk with a malformed quantity's path made whole (`at`: the container in the spec). */
function askAt(c: Json, at: readonly PropertyKey[], key: string): Ask | null {
  try {
    return containerAsk(c, key);
  } catch (e) {
    if (e instanceof ResourceFieldError)
      throw new ResourceFieldError([...at, "resources", ...e.path], e.message);
    throw e;
  }
}

/** The pod-level request (spec.resources, Kubernetes' pod-level resources): the pod asks for it
 * whole when set. */
function podLevelStep(spec: Json, key: string): Contribution | null {
  const ask = askAt(spec, [], key);
  return ask ? { path: ["resources", ask.field, key], ask, total: ask.amount, what: "the pod asks" } : null;
}

/** The first field of a pod spec that makes the pod ask for more than the task declared (every
 * resource but ephemeral-storage; one the task does not declare, at all), or null. */
export function resourceOverAsk(spec: Json, declared: DeclaredResources): OverAsk | null {
  for (const key of askedNames(spec)) {
    if (key === UNLIMITED) continue;
    const limit = declaredOf(declared, key);
    try {
      const pod = podLevelStep(spec, key);
      for (const step of pod ? [pod, ...requestSteps(spec, key)] : requestSteps(spec, key)) {
        if (step.total <= limit) continue;
        if (!NATIVE_RESOURCES.has(key) && limit === 0)
          return {
            path: step.path,
            message: `${key} is not declared by the task (declare it in the task's extendedResources; the cluster's pod policy must allow it)`,
          };
        return {
          path: step.path,
          message: `${step.what} for ${describe(key, step.total)} but the task declares ${describe(key, limit)} per pod (resources are fleetq's: declare them in the task's resources)`,
        };
      }
    } catch (e) {
      if (!(e instanceof ResourceFieldError)) throw e;
      return { path: e.path, message: e.message };
    }
  }
  return null;
}

function setResource(container: Json, key: string, amount: number | null): Json {
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

/** The resources the agent writes: fleetq's three and the declared extended ones. */
const writtenKeys = (declared: DeclaredResources): string[] => [
  ...FLEETQ_RESOURCES,
  ...Object.keys(declared.extendedResources ?? {}),
];

/** The container without any resource that is neither native nor declared (a template that asks
 * for one never passed the control plane; if one arrives anyway, it gets none). */
function withoutUndeclared(container: Json, declared: DeclaredResources): Json {
  const resources = obj(container.resources);
  const keep = (m: unknown) =>
    Object.fromEntries(
      Object.entries(obj(m)).filter(([k]) => NATIVE_RESOURCES.has(k) || declaredOf(declared, k) > 0),
    );
  if (!("requests" in resources) && !("limits" in resources)) return container;
  return {
    ...container,
    resources: {
      ...resources,
      ...("requests" in resources ? { requests: keep(resources.requests) } : {}),
      ...("limits" in resources ? { limits: keep(resources.limits) } : {}),
    },
  };
}

/** Splits `total` among `n` containers in whole units, the first taking the rest. */
function split(total: number, n: number): number[] {
  const each = Math.floor(total / n);
  return Array.from({ length: n }, (_, i) => (i === 0 ? total - each * (n - 1) : each));
}

/** Containers that run together (app containers and sidecars) with requests = limits adding up to
 * the declared amounts: each container keeps the share it asks for; the rest goes to the
 * containers that ask for none (GPUs and extended resources: to the first of them only), or to the
 * first container. A resource declared 0 is taken off every container. */
export function declaredContainerResources(containers: readonly Json[], declared: DeclaredResources): Json[] {
  let out = containers.map((c) => withoutUndeclared(c, declared));
  for (const key of writtenKeys(declared)) {
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
    else if (isDevice(key)) shares[open[0]!] = rest;
    else
      split(rest, open.length).forEach((s, j) => {
        shares[open[j]!] = s;
      });
    out = out.map((c, i) => setResource(c, key, total > 0 ? shares[i]! : null));
  }
  return out;
}

/** A regular init container runs with the sidecars started before it (`before`: what they hold):
 * it gets what it asks for up to what they leave of the declared amount (cpu and memory: all they
 * leave when it asks for none; devices only when it asks). */
function initContainerResources(c: Json, declared: DeclaredResources, before: Map<string, number>): Json {
  let out = withoutUndeclared(c, declared);
  for (const key of writtenKeys(declared)) {
    const total = declaredOf(declared, key);
    const room = Math.max(0, total - (before.get(key) ?? 0));
    const ask = safeAsk(c, key);
    const amount = ask === null ? (isDevice(key) ? 0 : room) : Math.min(ask, room);
    out = setResource(out, key, total > 0 ? amount : null);
  }
  return out;
}

/**
 * The pod spec with every container's requests and limits written from the declared amounts, so
 * that the pod's request as Kubernetes computes it is the declared one: the app containers and the
 * sidecars share the amounts (they run together), each regular init container gets at most what
 * the sidecars started before it leave. A pod-level `resources` is dropped: the containers' figures
 * make the pod's.
 */
export function declaredPodResources(spec: Json, declared: DeclaredResources): Json {
  const containers = containersOf(spec, "containers");
  const inits = containersOf(spec, "initContainers");
  const together = declaredContainerResources([...containers, ...inits.filter(isSidecar)], declared);
  const sidecars = together.slice(containers.length);
  const before = new Map<string, number>();
  const initOut = inits.map((c) => {
    if (!isSidecar(c)) return initContainerResources(c, declared, before);
    const out = sidecars.shift()!;
    for (const key of writtenKeys(declared))
      before.set(key, (before.get(key) ?? 0) + (safeAsk(out, key) ?? 0));
    return out;
  });
  const { resources: _podLevel, ...rest } = spec;
  return {
    ...rest,
    containers: together.slice(0, containers.length),
    ...(Array.isArray(spec.initContainers) ? { initContainers: initOut } : {}),
  };
}

function safeAsk(c: Json, key: string): number | null {
  try {
    const ask = containerAsk(c, key);
    return ask ? Math.ceil(ask.amount) : null;
  } catch {
    return null;
  }
}
