// A node as the session sees it: whole-device accounting (idle / used / releasing)
// plus the shared-GPU groups (fractional and GPU-memory pods), kept exactly as KAI's
// node_info does so that the same placements come out.
import { DeviceMap } from "./device-map.js";
import { SharedGpus } from "./gpu-sharing.js";
import type { PodInfo, ReceivedType } from "./pod-info.js";
import { isMigResource, Resource, type TaskRequest } from "./resources.js";
import type { NodeSpec, PodStatus } from "./spec.js";
import { isActiveUsed } from "./status.js";

export const GPU_COUNT_LABEL = "nvidia.com/gpu.count";
/** The groups of every entry without any (never changed: groups are replaced whole). */
const NO_GROUPS: string[] = [];

/** What the node recorded about a pod when it was added (removal undoes exactly this). */
export interface NodePodEntry {
  pod: PodInfo;
  status: PodStatus;
  gpuGroups: string[];
  shared: boolean;
  /** The whole-device vector this pod took (shared GPUs excluded). */
  vector: Resource;
  /** GPU memory this pod takes on each of its groups (shared pods). */
  groupMemory: number;
}

/** What a statement restores on rollback: one pod's entry, and the node's accounting when sums alone cannot undo it. */
export interface NodeState {
  podUid: string;
  entry: NodePodEntry | undefined;
  full: {
    idle: Resource;
    used: Resource;
    releasing: Resource;
    shared: ReturnType<SharedGpus["capture"]>;
    legacyMigPods: number;
    devices: (string | null)[] | null;
  } | null;
}

export class NodeInfo {
  readonly name: string;
  readonly spec: NodeSpec;
  readonly labels: Record<string, string>;
  readonly allocatable: Resource;
  readonly idle: Resource;
  readonly used: Resource;
  readonly releasing: Resource;
  /** MiB per GPU device. */
  readonly gpuMemory: number;
  readonly gpuMemorySynced: boolean;
  /** Devices on the node (the gpu.count label when present, else allocatable GPUs). */
  readonly gpuCount: number;
  readonly pods = new Map<string, NodePodEntry>();
  readonly shared: SharedGpus;
  /** Which device holds what, when the node reports its devices. */
  readonly devices: DeviceMap | null;
  legacyMigPods = 0;
  /** Bumped on every change; per-node caches compare against it. */
  version = 0;
  /** Index in the session's node list (stable, name order). */
  index = -1;
  /** Told of every change (the session's change log). */
  onChange: ((n: NodeInfo) => void) | null = null;

  constructor(spec: NodeSpec) {
    this.spec = spec;
    this.name = spec.name;
    this.labels = spec.labels;
    const a = spec.allocatable;
    this.allocatable = new Resource(a.cpuMillis, a.memory, a.gpus, a.pods);
    for (const [k, v] of Object.entries(a.extended ?? {})) this.allocatable.addScalar(k, v);
    this.idle = this.allocatable.clone();
    this.used = new Resource();
    this.releasing = new Resource();
    // KAI assumes 100 MiB when a node does not report its GPU memory, so shares stay computable.
    this.gpuMemory = spec.gpuMemory > 0 ? spec.gpuMemory : 100;
    this.gpuMemorySynced = spec.gpuMemorySynced && spec.gpuMemory > 0;
    const label = Number.parseInt(spec.labels[GPU_COUNT_LABEL] ?? "", 10);
    this.gpuCount = Number.isFinite(label) ? label : a.gpus;
    this.shared = new SharedGpus(this);
    this.devices = spec.gpuDevices?.length ? new DeviceMap(spec.gpuDevices) : null;
  }

  get isMigEnabled(): boolean {
    if (this.spec.migStrategy) return true;
    if (this.allocatable.scalars)
      for (const k of this.allocatable.scalars.keys()) if (isMigResource(k)) return true;
    return false;
  }

  get isCpuOnlyNode(): boolean {
    return !this.isMigEnabled && this.allocatable.gpus <= 0;
  }

  /** Used devices: whole ones plus shared groups in use. */
  usedGpuCount(): number {
    return this.used.gpus + this.shared.usedGroupCount();
  }

  /** Idle+Releasing of one resource, for placement scores: "gpu" or "cpu". */
  nonAllocated(resource: "gpu" | "cpu"): number {
    return resource === "gpu" ? this.idle.gpus + this.releasing.gpus : this.idle.cpu + this.releasing.cpu;
  }

  /** Idle GPUs counting the free part of shared devices and idle MIG instances (KAI: GetSumOfIdleGPUs). */
  gpuIdleWithShared(): number {
    let g = this.idle.gpusWithMig();
    for (const mem of this.shared.allocatedMemory.values()) if (mem > 0) g += 1 - this.memoryShare(mem);
    return g;
  }

  /** Releasing GPUs counting releasing parts of shared devices (KAI: GetSumOfReleasingGPUs). */
  gpuReleasingWithShared(): number {
    let g = this.releasing.gpusWithMig();
    for (const [grp, mem] of this.shared.releasingMemory)
      if (mem > 0 && !this.shared.isReleasingFromSharedTasks(grp)) g += this.memoryShare(mem);
    return g;
  }

  /** GPU memory a shared request takes on this node, per device (MiB). */
  requestGpuMemory(req: TaskRequest): number {
    return req.gpuMemory > 0 ? req.gpuMemory : Math.trunc(req.gpuPortion * this.gpuMemory);
  }

  /** GPU share of a memory request on this node, rounded up to 1/100. */
  memoryShare(memory: number): number {
    return Math.ceil((memory / this.gpuMemory) * 100) / 100;
  }

  /** The portion of one device a shared request takes here. */
  requestGpuPortion(req: TaskRequest): number {
    return req.gpuMemory > 0 ? this.memoryShare(req.gpuMemory) : req.gpuPortion;
  }

  private isValidGpuPortion(req: TaskRequest): boolean {
    const p = this.requestGpuPortion(req);
    return p <= 1 || p === Math.trunc(p);
  }

  /** Fits into Idle alone (no releasing resources needed). */
  isTaskAllocatable(pod: PodInfo): boolean {
    if (pod.req.isEmpty) return true;
    return this.fitsInto(pod.req, this.idle, false);
  }

  /** Fits into Idle + Releasing. */
  isTaskAllocatableOnReleasingOrIdle(pod: PodInfo): boolean {
    const req = pod.req;
    const i = this.idle;
    const r = this.releasing;
    // Quick refusal on the plain resources before building the sum (most misses end here).
    if (req.cpu > i.cpu + r.cpu || req.memory > i.memory + r.memory || req.pods > i.pods + r.pods)
      return false;
    if (req.kind === "regular" && req.gpus > i.gpus + r.gpus) return false;
    if (!r.scalars && !r.cpu && !r.memory && !r.gpus && !r.pods) return this.fitsInto(req, i, true);
    return this.fitsInto(req, i.clone().add(r), true);
  }

  private fitsInto(req: TaskRequest, avail: Resource, withReleasing: boolean): boolean {
    if (req.kind === "regular" || req.kind === "mig" || req.kind === "none") {
      return this.isValidGpuPortion(req) && req.fitsWhole(avail);
    }
    if (!req.baseFits(avail)) return false;
    if (!this.isValidGpuPortion(req)) return false;
    const wholeDevices = Math.floor(avail.gpus);
    if (wholeDevices >= req.gpuDevices) return true;
    // KAI counts matching shared groups against releasing-or-idle room in both checks.
    void withReleasing;
    return wholeDevices + this.shared.fittingGroupCount(req, req.gpuDevices) >= req.gpuDevices;
  }

  /** Record the GPU share the pod receives here (KAI: setAcceptedResources). */
  private setAccepted(pod: PodInfo): void {
    if (!isActiveUsed(pod.status)) return;
    const req = pod.req;
    let received: ReceivedType;
    let gpus: number;
    if (req.kind === "mig") {
      received = "mig";
      gpus = req.gpusQuota;
    } else if (req.isShared) {
      received = "fraction";
      const portion = this.requestGpuPortion(req);
      gpus = (Math.round(portion * 100) * req.gpuDevices) / 100;
      pod.acceptedGpuMemory = this.requestGpuMemory(req);
    } else {
      received = "regular";
      gpus = req.gpus;
    }
    pod.receivedType = received;
    pod.acceptedGpus = gpus;
    pod.acceptedCpu = req.cpu;
    pod.acceptedMemory = req.memory;
    pod.hasAccepted = true;
  }

  addTask(pod: PodInfo, allowOnDifferentGpu = false): void {
    this.setAccepted(pod);
    if (this.pods.has(pod.uid)) {
      if (!(pod.isSharedAllocation && allowOnDifferentGpu))
        throw new Error(`pod ${pod.name} is already on node ${this.name}`);
      this.pods.delete(pod.uid);
    }
    const shared = pod.isSharedAllocation;
    const vector = pod.req.nodeVectorFor(shared);
    const entry: NodePodEntry = {
      pod,
      status: pod.status,
      gpuGroups: pod.gpuGroups.length ? [...pod.gpuGroups] : NO_GROUPS,
      shared,
      vector,
      groupMemory: shared ? this.requestGpuMemory(pod.req) : 0,
    };
    this.addEntry(entry);
  }

  /** Account an entry (a pod as recorded when it was added). */
  addEntry(entry: NodePodEntry): void {
    this.pods.set(entry.pod.uid, entry);
    if (entry.pod.spec.legacyMig) this.legacyMigPods++;
    const vector = entry.vector;
    this.used.add(vector);
    if (entry.status === "Releasing") {
      this.releasing.add(vector);
      this.idle.sub(vector);
    } else if (entry.status === "Pipelined") {
      this.releasing.sub(vector);
    } else {
      this.idle.sub(vector);
    }
    if (entry.shared) for (const g of entry.gpuGroups) this.shared.add(entry, g);
    if (this.devices && entry.status !== "Pipelined") this.holdDevices(entry);
    this.version++;
    this.onChange?.(this);
  }

  removeTask(pod: PodInfo): void {
    const entry = this.pods.get(pod.uid);
    if (!entry) throw new Error(`pod ${pod.name} is not on node ${this.name}`);
    this.pods.delete(pod.uid);
    if (entry.pod.spec.legacyMig) this.legacyMigPods--;
    const v = entry.vector;
    this.used.sub(v);
    if (entry.status === "Releasing") {
      this.releasing.sub(v);
      this.idle.add(v);
    } else if (entry.status === "Pipelined") {
      this.releasing.add(v);
    } else {
      this.idle.add(v);
    }
    if (entry.shared) for (const g of entry.gpuGroups) this.shared.remove(entry, g);
    if (this.devices) this.releaseDevices(entry);
    this.version++;
    this.onChange?.(this);
  }

  updateTask(pod: PodInfo): void {
    this.removeTask(pod);
    this.addTask(pod);
  }

  /** Give a placed pod its devices: the ones it names if free, else the best free ones. */
  private holdDevices(entry: NodePodEntry): void {
    const map = this.devices!;
    const pod = entry.pod;
    if (entry.shared) {
      for (const g of entry.gpuGroups) {
        const holder = `group:${g}`;
        if (map.holders().includes(holder)) continue;
        const named = /^\d+$/.test(g) ? [Number(g)] : null;
        if (!(named && map.take(named, holder))) {
          const chosen = map.choose(1);
          if (chosen) map.take(chosen, holder);
        }
      }
      return;
    }
    const n = entry.vector.gpus;
    if (n <= 0) return;
    if (pod.gpuDevices.length === n && map.take(pod.gpuDevices, pod.uid)) return;
    const chosen = map.choose(n);
    if (chosen && map.take(chosen, pod.uid)) pod.gpuDevices = chosen;
  }

  private releaseDevices(entry: NodePodEntry): void {
    const map = this.devices!;
    if (!entry.shared) {
      if (entry.vector.gpus > 0) map.release(entry.pod.uid);
      return;
    }
    for (const g of entry.gpuGroups) if ((this.shared.usedMemory.get(g) ?? 0) <= 0) map.release(`group:${g}`);
  }

  /** A device to open for sharing: its index when the node reports devices (`taken` excluded). */
  freeDeviceFor(taken: readonly string[]): string | null {
    if (!this.devices) return null;
    const exclude = new Set(taken.filter((g) => /^\d+$/.test(g)).map(Number));
    const chosen = this.devices.choose(1, exclude);
    return chosen ? String(chosen[0]) : null;
  }

  /** The accounting and `podUid`'s entry, to put back exactly with restore(). */
  capture(pod: PodInfo): NodeState {
    const entry = this.pods.get(pod.uid);
    // A whole-resource pod on a node without a device map changes only plain sums: its
    // entry is enough to undo it exactly. Shared GPUs and devices need the full picture.
    if (!pod.req.isShared && !entry?.shared && !this.devices) return { podUid: pod.uid, entry, full: null };
    return {
      podUid: pod.uid,
      entry,
      full: {
        idle: this.idle.clone(),
        used: this.used.clone(),
        releasing: this.releasing.clone(),
        shared: this.shared.capture(),
        legacyMigPods: this.legacyMigPods,
        devices: this.devices ? this.devices.holders() : null,
      },
    };
  }

  restore(s: NodeState): void {
    const f = s.full;
    if (!f) {
      const current = this.pods.get(s.podUid);
      if (current) this.removeTask(current.pod);
      if (s.entry) this.addEntry(s.entry);
      return;
    }
    copyInto(this.idle, f.idle);
    copyInto(this.used, f.used);
    copyInto(this.releasing, f.releasing);
    this.shared.restore(f.shared);
    this.legacyMigPods = f.legacyMigPods;
    if (f.devices) this.devices?.restoreHolders(f.devices);
    if (s.entry) this.pods.set(s.podUid, s.entry);
    else this.pods.delete(s.podUid);
    this.version++;
    this.onChange?.(this);
  }

  /** Idle and releasing device counts, as KAI's tests read them (whole devices). */
  idleGpus(): number {
    return this.idle.gpus;
  }

  releasingGpus(): number {
    return this.releasing.gpus;
  }
}

function copyInto(to: Resource, from: Resource): void {
  to.cpu = from.cpu;
  to.memory = from.memory;
  to.gpus = from.gpus;
  to.pods = from.pods;
  to.scalars = from.scalars ? new Map(from.scalars) : null;
}
