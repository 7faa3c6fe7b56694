// Shared-GPU accounting of one node: per GPU group (one physical device shared by
// fractional or GPU-memory pods) the memory used, allocated and being released, and
// when a whole device moves in or out of the node's idle / releasing counts.
// Mirrors KAI's gpu_sharing_node_info so the same devices are chosen.
import type { NodeInfo, NodePodEntry } from "./node-info.js";
import type { TaskRequest } from "./resources.js";

export class SharedGpus {
  readonly usedMemory = new Map<string, number>();
  readonly releasingMemory = new Map<string, number>();
  readonly allocatedMemory = new Map<string, number>();
  /** Groups whose whole usage is releasing and counted as one releasing device. */
  readonly releasingMarked = new Set<string>();

  constructor(private readonly node: NodeInfo) {}

  /** The per-group maps (null when nothing is shared, the common case). */
  capture(): {
    used: Map<string, number>;
    releasing: Map<string, number>;
    allocated: Map<string, number>;
    marked: Set<string>;
  } | null {
    if (
      this.usedMemory.size === 0 &&
      this.releasingMemory.size === 0 &&
      this.allocatedMemory.size === 0 &&
      this.releasingMarked.size === 0
    )
      return null;
    return {
      used: new Map(this.usedMemory),
      releasing: new Map(this.releasingMemory),
      allocated: new Map(this.allocatedMemory),
      marked: new Set(this.releasingMarked),
    };
  }

  restore(s: ReturnType<SharedGpus["capture"]>): void {
    const put = <K, V>(to: Map<K, V>, from: Map<K, V> | undefined) => {
      to.clear();
      if (from) for (const [k, v] of from) to.set(k, v);
    };
    put(this.usedMemory, s?.used);
    put(this.releasingMemory, s?.releasing);
    put(this.allocatedMemory, s?.allocated);
    this.releasingMarked.clear();
    if (s) for (const g of s.marked) this.releasingMarked.add(g);
  }

  private bump(m: Map<string, number>, g: string, d: number): number {
    const v = (m.get(g) ?? 0) + d;
    m.set(g, v);
    return v;
  }

  usedGroupCount(): number {
    let n = 0;
    for (const v of this.usedMemory.values()) if (v > 0) n++;
    return n;
  }

  allocatedGroupCount(): number {
    let n = 0;
    for (const v of this.allocatedMemory.values()) if (v > 0) n++;
    return n;
  }

  add(entry: NodePodEntry, g: string): void {
    const node = this.node;
    const mem = entry.groupMemory;
    const used = this.bump(this.usedMemory, g, mem);
    if (entry.status === "Releasing") {
      const rel = this.bump(this.releasingMemory, g, mem);
      this.bump(this.allocatedMemory, g, mem);
      if (used === rel) {
        if (!this.releasingMarked.has(g)) {
          node.releasing.gpus += 1;
          this.releasingMarked.add(g);
        }
        if (node.gpuCount < node.idle.gpus + node.usedGpuCount()) node.idle.gpus -= 1;
      }
    } else if (entry.status === "Pipelined") {
      const rel = this.bump(this.releasingMemory, g, -mem);
      if (used - mem === rel + mem) node.releasing.gpus -= 1;
    } else {
      this.bump(this.allocatedMemory, g, mem);
      if (used <= mem && node.gpuCount < node.idle.gpus + node.usedGpuCount()) node.idle.gpus -= 1;
      if (this.releasingMarked.has(g)) {
        node.releasing.gpus -= 1;
        this.releasingMarked.delete(g);
      }
    }
  }

  remove(entry: NodePodEntry, g: string): void {
    const node = this.node;
    const mem = entry.groupMemory;
    const used = this.bump(this.usedMemory, g, -mem);
    if (entry.status === "Releasing") {
      this.bump(this.releasingMemory, g, -mem);
      this.bump(this.allocatedMemory, g, -mem);
      if (used <= 0) {
        if (node.gpuCount >= node.idle.gpus + node.usedGpuCount()) node.idle.gpus += 1;
        if (this.releasingMarked.has(g)) {
          node.releasing.gpus -= 1;
          this.releasingMarked.delete(g);
        }
      }
    } else if (entry.status === "Pipelined") {
      const rel = this.bump(this.releasingMemory, g, mem);
      const usedBefore = used + mem;
      const relBefore = rel - mem;
      if (usedBefore === relBefore || (used === 0 && rel === 0)) node.releasing.gpus += 1;
    } else {
      this.bump(this.allocatedMemory, g, -mem);
      if (used <= 0 && node.gpuCount >= node.idle.gpus + node.usedGpuCount()) node.idle.gpus += 1;
      if (this.isReleasingFromSharedTasks(g) && !this.releasingMarked.has(g)) {
        node.releasing.gpus += 1;
        this.releasingMarked.add(g);
      }
    }
  }

  /** Every pod on the group is releasing. */
  isReleasingFromSharedTasks(g: string): boolean {
    const used = this.usedMemory.get(g) ?? 0;
    if (used === 0) return false;
    return (this.releasingMemory.get(g) ?? 0) === used;
  }

  private enoughOnGroup(req: TaskRequest, g: string): boolean {
    const n = this.node;
    return (
      n.gpuMemory -
        (this.allocatedMemory.get(g) ?? 0) +
        (this.releasingMemory.get(g) ?? 0) -
        n.requestGpuMemory(req) >=
      0
    );
  }

  private isAllReleased(g: string): boolean {
    return (this.allocatedMemory.get(g) ?? 0) === (this.releasingMemory.get(g) ?? 0);
  }

  /** A partly used group that can take the request (counting memory being released). */
  fitsOnGroup(req: TaskRequest, g: string): boolean {
    return (this.usedMemory.get(g) ?? 0) !== 0 && this.enoughOnGroup(req, g) && !this.isAllReleased(g);
  }

  /** The group has enough idle (not releasing) memory for the request. */
  enoughIdleOnGroup(req: TaskRequest, g: string): boolean {
    if (!this.allocatedMemory.has(g)) return false;
    return this.node.gpuMemory - (this.allocatedMemory.get(g) ?? 0) - this.node.requestGpuMemory(req) >= 0;
  }

  fittingGroupCount(req: TaskRequest, enough: number): number {
    let n = 0;
    for (const g of this.usedMemory.keys())
      if (this.fitsOnGroup(req, g)) {
        n++;
        if (n >= enough) return n;
      }
    return n;
  }

  /** Groups in discovery order (insertion order of the used-memory map). */
  groups(): IterableIterator<string> {
    return this.usedMemory.keys();
  }

  usedPortion(g: string): number {
    return (this.usedMemory.get(g) ?? 0) / this.node.gpuMemory;
  }
}
