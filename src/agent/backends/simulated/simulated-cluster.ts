// The state of a simulated cluster: virtual nodes with their free resources and the pods
// running on them, driven by an explicit clock (`now` in ms) so tests can step time.
// Pods run for their durationSeconds, then succeed or fail and release what they held.
// GPU devices a request names are held by index: a request naming a device another pod holds
// is refused, so a device booked twice by the control plane shows up as a failed bind; so is a
// pod that would take more of a shared device's memory than is left on it (a device plugin
// sharing a GPU refuses that too).
import type { BindRequestMessage } from "../../../protocol/bind-request.js";
import { supersededEviction } from "../superseded-eviction.js";
import type { NodeInventory, PodRef, PodStateChange, RequestOutcome } from "../types.js";
import { TimerHeap, type TimerEntry } from "./timer-heap.js";

interface SimNode {
  inventory: NodeInventory;
  freeCpuMillis: number;
  freeMemory: number;
  freeGpus: number;
  /** Shared-GPU group id → pods on it and the GPU memory (MiB) they take; each group holds one
   * whole device. */
  sharedGpuGroups: Map<string, { pods: number; memory: number }>;
  /** The node's device indices when it reports its devices; null = it does not. */
  deviceIndices: Set<number> | null;
  /** Device index → who holds it: a pod ("job/pod") or a shared group ("group:<id>"). */
  deviceHolders: Map<number, string>;
  pods: number;
}

interface SimPod {
  jobId: string;
  name: string;
  node: SimNode;
  cpuMillis: number;
  memory: number;
  gpus: number;
  sharedGroups: string[];
  /** MiB the pod takes on each of its shared groups. */
  groupMemory: number;
  /** Device indices the pod holds (named by its request). */
  devices: number[];
  exitFailure: boolean;
  /** The BIND request whose run this is: a report that the run ended early names it. */
  bindRequest: string;
  /** The cluster generation of the newest bind this run carries out: an eviction decided at an
   * older one was meant for an earlier run of the pod. */
  bindGeneration: number;
  timer: TimerEntry<SimPod>;
}

export interface RequestEffect {
  outcome: RequestOutcome;
  changes: PodStateChange[];
}

export class SimulatedCluster {
  private readonly nodes = new Map<string, SimNode>();
  private readonly pods = new Map<string, SimPod>();
  private readonly timers = new TimerHeap<SimPod>();

  constructor(
    nodes: NodeInventory[],
    private readonly defaultPodDurationSeconds: number,
  ) {
    for (const inventory of nodes) {
      this.nodes.set(inventory.name, {
        inventory,
        freeCpuMillis: inventory.capacity.cpuMillis,
        freeMemory: inventory.capacity.memory,
        freeGpus: inventory.capacity.gpus,
        sharedGpuGroups: new Map(),
        deviceIndices: inventory.gpuDevices?.length
          ? new Set(inventory.gpuDevices.map((d) => d.index))
          : null,
        deviceHolders: new Map(),
        pods: 0,
      });
    }
  }

  get nodeCount(): number {
    return this.nodes.size;
  }

  get runningPodCount(): number {
    return this.pods.size;
  }

  listNodes(): NodeInventory[] {
    return [...this.nodes.values()].map((node) => node.inventory);
  }

  /** Free resources and pod count of a node (tests, dashboards). */
  nodeUsage(name: string): { cpuMillis: number; memory: number; gpus: number; pods: number } | null {
    const node = this.nodes.get(name);
    if (!node) return null;
    return { cpuMillis: node.freeCpuMillis, memory: node.freeMemory, gpus: node.freeGpus, pods: node.pods };
  }

  /** Who holds each GPU device of a node: index → "job/pod" or "group:<id>" (tests). */
  deviceHolders(name: string): Map<number, string> {
    return new Map(this.nodes.get(name)?.deviceHolders ?? []);
  }

  /** The pods running now. */
  listPods(): PodRef[] {
    return [...this.pods.values()].map((pod) => ({ jobId: pod.jobId, pod: pod.name }));
  }

  /** Where a pod runs, or null when it does not run (never bound, finished or evicted). */
  podNode(jobId: string, pod: string): string | null {
    return this.pods.get(podKey(jobId, pod))?.node.inventory.name ?? null;
  }

  /** Cordons or uncordons a node; returns its new inventory (a change to report). */
  setUnschedulable(name: string, unschedulable: boolean): NodeInventory {
    const node = this.nodes.get(name);
    if (!node) throw new Error(`no node ${name}`);
    node.inventory = { ...node.inventory, unschedulable };
    return node.inventory;
  }

  bind(request: BindRequestMessage, now: number): RequestEffect {
    const key = podKey(request.job.id, request.pod.name);
    const running = this.pods.get(key);
    if (running) {
      const where = running.node.inventory.name;
      if (where !== request.node)
        return {
          outcome: { ok: false, message: `pod already runs on ${where}, not ${request.node}` },
          changes: [],
        };
      // The books know this run by the newer bind now: its end is reported under that one (ids
      // are time-ordered, so a late repeat of an older bind does not take it back).
      if (request.id > running.bindRequest) running.bindRequest = request.id;
      running.bindGeneration = Math.max(running.bindGeneration, request.generation);
      return { outcome: { ok: true, message: `already running on ${where}` }, changes: [] };
    }
    const node = this.nodes.get(request.node);
    if (!node) return { outcome: { ok: false, message: `node ${request.node} does not exist` }, changes: [] };

    const r = request.pod.resources;
    const shared = r.gpuFraction > 0 || r.gpuMemory > 0 ? sharedGroupsOf(request, key) : [];
    const newDevices = shared.filter((group) => !node.sharedGpuGroups.has(group)).length;
    const short = shortfall(node, r.cpuMillis, r.memory, r.gpus + newDevices);
    if (short)
      return {
        outcome: { ok: false, message: `node ${request.node} cannot fit the pod: ${short}` },
        changes: [],
      };
    const groupMemory = shared.length ? sharedMemoryOf(node, r) : 0;
    const full = memoryShortfall(node, shared, groupMemory);
    if (full)
      return {
        outcome: { ok: false, message: `node ${request.node} cannot fit the pod: ${full}` },
        changes: [],
      };
    const clash = deviceClash(node, request, key, shared);
    if (clash) return { outcome: { ok: false, message: clash }, changes: [] };

    const durationMs = (request.pod.durationSeconds ?? this.defaultPodDurationSeconds) * 1000;
    const pod: SimPod = {
      jobId: request.job.id,
      name: request.pod.name,
      node,
      cpuMillis: r.cpuMillis,
      memory: r.memory,
      gpus: r.gpus,
      sharedGroups: shared,
      groupMemory,
      devices: [...request.gpuDevices],
      exitFailure: request.pod.exitFailure,
      bindRequest: request.id,
      bindGeneration: request.generation,
      timer: undefined as unknown as TimerEntry<SimPod>,
    };
    pod.timer = this.timers.schedule(now + durationMs, pod);
    this.hold(pod);
    this.pods.set(key, pod);
    return {
      outcome: { ok: true, message: `running on ${node.inventory.name}` },
      changes: [{ jobId: pod.jobId, pod: pod.name, state: "RUNNING" }],
    };
  }

  evict(request: BindRequestMessage): RequestEffect {
    const key = podKey(request.job.id, request.pod.name);
    const pod = this.pods.get(key);
    if (!pod || pod.node.inventory.name !== request.node) {
      return {
        outcome: { ok: true, message: `pod is not running on ${request.node} (already gone)` },
        changes: [],
      };
    }
    const stale = supersededEviction(request, pod.bindGeneration);
    if (stale) return { outcome: stale, changes: [] };
    this.timers.cancel(pod.timer);
    this.end(key, pod);
    const why = request.reason ? `: ${request.reason}` : "";
    return {
      outcome: { ok: true, message: `evicted from ${request.node}` },
      // An evicted pod goes back to Pending without a node (KAI semantics).
      changes: [
        {
          jobId: pod.jobId,
          pod: pod.name,
          state: "PENDING",
          message: `evicted from ${request.node}${why}`,
          bindRequest: pod.bindRequest,
        },
      ],
    };
  }

  /** Takes every pod of the job off its node unfinished (its workload deleted): Pending again. */
  endJob(jobId: string, why: string): PodStateChange[] {
    const changes: PodStateChange[] = [];
    for (const [key, pod] of [...this.pods]) {
      if (pod.jobId !== jobId) continue;
      this.timers.cancel(pod.timer);
      this.end(key, pod);
      changes.push({ jobId, pod: pod.name, state: "PENDING", message: why, bindRequest: pod.bindRequest });
    }
    return changes;
  }

  /** Ends every pod whose time is up at `now`. */
  advance(now: number): PodStateChange[] {
    const changes: PodStateChange[] = [];
    for (const pod of this.timers.popDue(now)) {
      this.end(podKey(pod.jobId, pod.name), pod);
      const run = { jobId: pod.jobId, pod: pod.name, bindRequest: pod.bindRequest };
      changes.push(
        pod.exitFailure
          ? { ...run, state: "FAILED", message: "the pod exited with a failure (simulated)", exitCode: 1 }
          : { ...run, state: "SUCCEEDED", exitCode: 0 },
      );
    }
    return changes;
  }

  /** When the next pod ends, or null when none runs. */
  nextDeadline(): number | null {
    return this.timers.nextAt();
  }

  private hold(pod: SimPod): void {
    const node = pod.node;
    node.freeCpuMillis -= pod.cpuMillis;
    node.freeMemory -= pod.memory;
    node.freeGpus -= pod.gpus;
    node.pods++;
    for (const index of pod.devices) node.deviceHolders.set(index, podKey(pod.jobId, pod.name));
    for (const group of pod.sharedGroups) {
      const held = node.sharedGpuGroups.get(group);
      if (!held) {
        node.freeGpus--; // the group's first pod takes the device
        const index = groupDevice(node, group);
        if (index !== null) node.deviceHolders.set(index, `group:${group}`);
        node.sharedGpuGroups.set(group, { pods: 1, memory: pod.groupMemory });
      } else {
        held.pods++;
        held.memory += pod.groupMemory;
      }
    }
  }

  private end(key: string, pod: SimPod): void {
    const node = pod.node;
    node.freeCpuMillis += pod.cpuMillis;
    node.freeMemory += pod.memory;
    node.freeGpus += pod.gpus;
    node.pods--;
    for (const index of pod.devices) node.deviceHolders.delete(index);
    for (const group of pod.sharedGroups) {
      const held = node.sharedGpuGroups.get(group);
      if (held && held.pods > 1) {
        held.pods--;
        held.memory -= pod.groupMemory;
      } else {
        node.sharedGpuGroups.delete(group);
        node.freeGpus++; // the group's last pod gives the device back
        const index = groupDevice(node, group);
        if (index !== null) node.deviceHolders.delete(index);
      }
    }
    this.pods.delete(key);
  }
}

/** A pod's key in a simulated cluster: job id and pod name. */
export function podKey(jobId: string, pod: string): string {
  return `${jobId}/${pod}`;
}

/** A fractional pod without a named group gets a device of its own. */
function sharedGroupsOf(request: BindRequestMessage, key: string): string[] {
  return request.gpuGroups.length > 0 ? [...new Set(request.gpuGroups)] : [key];
}

/** GPU memory (MiB) a shared pod takes on each of its devices: its GPU-memory request, or its
 * fraction of the node's device memory. */
function sharedMemoryOf(node: SimNode, r: { gpuFraction: number; gpuMemory: number }): number {
  return r.gpuMemory > 0 ? r.gpuMemory : Math.trunc(r.gpuFraction * node.inventory.capacity.gpuMemory);
}

/** Which shared group has less memory left than the pod takes, or null (a node that does not
 * report its GPU memory is not checked). */
function memoryShortfall(node: SimNode, groups: string[], memory: number): string | null {
  const capacity = node.inventory.capacity.gpuMemory;
  if (capacity <= 0) return null;
  for (const group of groups) {
    const used = node.sharedGpuGroups.get(group)?.memory ?? 0;
    if (used + memory > capacity)
      return `GPU group ${group} has ${capacity - used} MiB of ${capacity} free, the pod takes ${memory} MiB`;
  }
  return null;
}

/** On a node that reports its devices, a shared group is named by its device's index. */
function groupDevice(node: SimNode, group: string): number | null {
  if (!node.deviceIndices || !/^\d+$/.test(group)) return null;
  const index = Number(group);
  return node.deviceIndices.has(index) ? index : null;
}

/** Why the request's devices cannot be had on this node, or null when they can. */
function deviceClash(
  node: SimNode,
  request: BindRequestMessage,
  key: string,
  shared: string[],
): string | null {
  const named = request.gpuDevices;
  const where = `node ${node.inventory.name}`;
  if (named.length > 0 && named.length !== request.pod.resources.gpus)
    return `the request names ${named.length} GPU device(s) for a pod of ${request.pod.resources.gpus} GPU(s)`;
  if (new Set(named).size !== named.length) return `the request names a GPU device twice: ${named.join(",")}`;
  const wanted = [
    ...named.map((index) => ({ index, holder: key })),
    ...shared
      .filter((group) => !node.sharedGpuGroups.has(group))
      .flatMap((group) => {
        const index = groupDevice(node, group);
        return index === null ? [] : [{ index, holder: `group:${group}` }];
      }),
  ];
  for (const { index, holder } of wanted) {
    if (node.deviceIndices && !node.deviceIndices.has(index)) return `${where} has no GPU device ${index}`;
    const current = node.deviceHolders.get(index);
    if (current !== undefined && current !== holder)
      return `GPU device ${index} of ${where} is already held by ${current}`;
  }
  return null;
}

function shortfall(node: SimNode, cpuMillis: number, memory: number, gpus: number): string | null {
  const short: string[] = [];
  if (cpuMillis > node.freeCpuMillis) short.push(`cpu ${cpuMillis}m > free ${node.freeCpuMillis}m`);
  if (memory > node.freeMemory) short.push(`memory ${memory} > free ${node.freeMemory} bytes`);
  if (gpus > node.freeGpus) short.push(`gpus ${gpus} > free ${node.freeGpus}`);
  if (node.pods >= node.inventory.maxPods)
    short.push(`already ${node.pods} pods (max ${node.inventory.maxPods})`);
  return short.length > 0 ? short.join(", ") : null;
}
