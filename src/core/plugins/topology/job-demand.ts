// What a (sub-)group's tasks ask of a domain (KAI: job_filtering.go). Two ways to judge
// whether a domain can hold them:
// - homogeneous tasks: how many copies of the largest task fit node by node
//   ("representative pod" accounting, summed over the domain);
// - mixed tasks: the dominant ratio of the summed request to the domain's free resources.
import type { NodeInfo } from "../../api/node-info.js";
import type { PodInfo } from "../../api/pod-info.js";
import { isMigResource, Resource, TaskRequest } from "../../api/resources.js";
import { type Amounts, scalarOf } from "./domain-tree.js";

/** Ratio KAI uses for a requested resource the domain has none of. */
const MISSING_RESOURCE_RATIO = 1000;

/** Sum of the tasks' requests: cpu, memory, GPUs (fractions counted), pods, MIG + extended in scalars. */
export function demandOf(tasks: readonly PodInfo[]): Resource {
  const sum = new Resource();
  for (const t of tasks) {
    const r = t.req;
    sum.cpu += r.cpu;
    sum.memory += r.memory;
    sum.gpus += r.gpus;
    sum.pods += 1;
    if (r.mig) for (const [k, v] of r.mig) sum.addScalar(k, v);
    if (r.extended) for (const [k, v] of r.extended) sum.addScalar(k, v);
  }
  return sum;
}

/** Kubernetes Quantity.Value(): rounded up, away from zero. */
function roundUp(x: number): number {
  return x >= 0 ? Math.ceil(x) : Math.floor(x);
}

/**
 * A resource as KAI's ratio reads it (Resource.ToResourceList then Quantity.Value()):
 * CPU in whole cores rounded up, memory in bytes, extended resources in units rounded
 * up, and MIG counts (kept unscaled but read as milli-quantities) divided by 1000 and
 * rounded up, so any positive MIG count reads as 1.
 */
function cpuValue(millis: number): number {
  return roundUp(Math.trunc(millis) / 1000);
}
function scalarValue(name: string, v: number): number {
  return isMigResource(name) ? roundUp(Math.trunc(v) / 1000) : roundUp(Math.trunc(v * 1000) / 1000);
}

/**
 * The dominant share of a domain's free resources the tasks would take; above 1 the
 * domain cannot hold them (KAI: getJobRatioToFreeResources). Pods are ignored.
 */
export function ratioToFree(demand: Amounts, free: Amounts): number {
  let ratio = 0;
  if (demand.gpus > 0) ratio = Math.max(ratio, demand.gpus / free.gpus);
  ratio = Math.max(ratio, resourceRatio(cpuValue(demand.cpu), cpuValue(free.cpu)));
  ratio = Math.max(ratio, resourceRatio(Math.trunc(demand.memory), Math.trunc(free.memory)));
  if (demand.scalars)
    for (const [name, v] of demand.scalars)
      ratio = Math.max(ratio, resourceRatio(scalarValue(name, v), scalarValue(name, scalarOf(free, name))));
  return ratio;
}

function resourceRatio(requested: number, free: number): number {
  if (requested === 0) return 0;
  return free === 0 ? MISSING_RESOURCE_RATIO : requested / free;
}

/**
 * Representative-pod accounting applies when the tasks are homogeneous: all or none use
 * GPUs, and every extended resource is asked by every task (KAI: useRepresentorPodsAccounting).
 */
export function isHomogeneous(tasks: readonly PodInfo[]): boolean {
  let gpuTasks = 0;
  const extended = new Map<string, number>();
  for (const t of tasks) {
    if (t.req.gpus > 0) gpuTasks++;
    if (t.req.extended) for (const k of t.req.extended.keys()) extended.set(k, (extended.get(k) ?? 0) + 1);
  }
  if (gpuTasks !== 0 && gpuTasks !== tasks.length) return false;
  for (const n of extended.values()) if (n !== tasks.length) return false;
  return true;
}

/** The per-resource maximum over the tasks (KAI: initTasksRepresentorMetadataStruct). */
export interface RepresentativePod {
  cpu: number;
  memory: number;
  extended: Map<string, number>;
  /** Devices of the task with the most GPUs (0 for memory-only or MIG requests, as in KAI). */
  gpuDevices: number;
  /** 1 for whole devices, the fraction otherwise. */
  gpuPortion: number;
  hasMig: boolean;
  /** For counting partly used shared devices that could take one copy's share. */
  shareRequest: TaskRequest | null;
}

function gpuShape(r: TaskRequest): { devices: number; portion: number } {
  if (r.kind === "regular") return { devices: r.gpuDevices, portion: 1 };
  if (r.kind === "fraction") return { devices: r.gpuDevices, portion: r.gpuPortion };
  if (r.kind === "memory") return { devices: r.gpuDevices, portion: 0 };
  return { devices: 0, portion: 0 };
}

/** KAI's GPUs() of a (devices, portion) pair, in hundredths to avoid float drift. */
const shapeGpus = (devices: number, portion: number) => (Math.round(portion * 100) * devices) / 100;

/** The representative pod, or KAI's error when two tasks ask for different fractions. */
export function representativePod(tasks: readonly PodInfo[]): RepresentativePod | string {
  const rep: RepresentativePod = {
    cpu: 0,
    memory: 0,
    extended: new Map(),
    gpuDevices: 0,
    gpuPortion: 0,
    hasMig: false,
    shareRequest: null,
  };
  for (const t of tasks) {
    const r = t.req;
    rep.cpu = Math.max(rep.cpu, r.cpu);
    rep.memory = Math.max(rep.memory, r.memory);
    if (r.extended)
      for (const [k, v] of r.extended) rep.extended.set(k, Math.max(rep.extended.get(k) ?? 0, v));
    if (r.mig) rep.hasMig = true;
    const s = gpuShape(r);
    if (rep.gpuPortion !== 0 && s.portion !== 0 && rep.gpuPortion !== s.portion)
      return (
        "cannot calculate max resource for GpuResourceRequirements with different fractional portions. " +
        `${rep.gpuPortion} vs ${s.portion}`
      );
    if (shapeGpus(s.devices, s.portion) > shapeGpus(rep.gpuDevices, rep.gpuPortion)) {
      rep.gpuDevices = s.devices;
      rep.gpuPortion = s.portion;
    }
  }
  if (rep.gpuDevices > 0)
    rep.shareRequest = new TaskRequest({
      cpuMillis: 0,
      memory: 0,
      gpus: rep.gpuPortion >= 1 ? 1 : 0,
      gpuFraction: rep.gpuPortion < 1 ? rep.gpuPortion : 0,
      gpuMemory: 0,
      mig: {},
      extended: {},
    });
  return rep;
}

/** Asks for nothing but a pod slot: every node "holds" all the tasks (KAI: LessEqual(onePodOnly)). */
export function asksOnlyAPod(rep: RepresentativePod): boolean {
  return rep.cpu <= 0 && rep.memory <= 0 && rep.extended.size === 0 && rep.gpuDevices <= 0 && !rep.hasMig;
}

/** Identifies a representative pod's shape, for caching counts across calls. */
export function representativeKey(rep: RepresentativePod): string {
  let k = `${rep.cpu}|${rep.memory}|${rep.gpuDevices}|${rep.gpuPortion}|${rep.hasMig}`;
  for (const [name, v] of rep.extended) k += `|${name}=${v}`;
  return k;
}

/** Largest k with k·per ≤ free (k·0 ≤ free holds for any k when free ≥ 0). */
function copies(free: number, per: number): number {
  if (per <= 0) return free >= 0 ? Number.POSITIVE_INFINITY : 0;
  let k = Math.floor(free / per);
  while (k > 0 && k * per > free) k--;
  return Math.max(k, 0);
}

/**
 * How many copies of the representative pod fit into the node's idle + releasing
 * resources at once (KAI: calcNodeAccommodation, which grows a k-copies test pod until
 * it no longer fits; the test pod has no request type, so MIG instances are not checked
 * and GPUs are counted as whole free devices plus shared devices with room). Not for a
 * pod that asks only for a slot (see asksOnlyAPod).
 */
export function nodeAccommodation(rep: RepresentativePod, node: NodeInfo): number {
  const idle = node.idle;
  const rel = node.releasing;
  let k = copies(idle.pods + rel.pods, 1);
  k = Math.min(k, copies(idle.cpu + rel.cpu, rep.cpu));
  k = Math.min(k, copies(idle.memory + rel.memory, rep.memory));
  for (const [name, v] of rep.extended) k = Math.min(k, copies(idle.scalar(name) + rel.scalar(name), v));
  if (rep.gpuDevices > 0 && rep.shareRequest) {
    let devices = Math.floor(idle.gpus + rel.gpus);
    if (node.shared.usedMemory.size > 0)
      devices += node.shared.fittingGroupCount(rep.shareRequest, Number.POSITIVE_INFINITY);
    k = Math.min(k, Math.floor(devices / rep.gpuDevices));
  }
  return Number.isFinite(k) ? k : 0;
}
