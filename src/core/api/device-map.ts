// Which physical GPU of a node each pod or shared group holds, for nodes that report
// their devices. Beyond KAI (which leaves device choice to the node): a multi-GPU pod
// gets devices from one NVLink/NVSwitch domain when one has room, else from one NUMA
// node, else from as few domains as possible — the node > NVSwitch > NUMA order of
// topology-aware placement carried down to the devices. Among domains that fit, the
// fullest wins, keeping whole domains free for the next large pod.
import type { GpuDeviceSpec } from "./spec.js";

export interface Device {
  readonly index: number;
  readonly domain: string | null;
  readonly numa: number | null;
  /** Pod uid, or `group:<id>` for a shared device; null when free. */
  holder: string | null;
}

export class DeviceMap {
  readonly devices: Device[];

  constructor(specs: readonly GpuDeviceSpec[]) {
    this.devices = specs.map((d, i) => ({
      index: d.index ?? i,
      domain: d.nvlinkDomain ?? null,
      numa: d.numaNode ?? null,
      holder: null,
    }));
  }

  byIndex(i: number): Device | undefined {
    return this.devices.find((d) => d.index === i);
  }

  freeCount(): number {
    let n = 0;
    for (const d of this.devices) if (d.holder === null) n++;
    return n;
  }

  /** The best `n` free devices (not counting `exclude`), or null when fewer are free. */
  choose(n: number, exclude: ReadonlySet<number> = new Set()): number[] | null {
    const free = this.devices.filter((d) => d.holder === null && !exclude.has(d.index));
    if (free.length < n) return null;
    const inOne = (key: (d: Device) => string | number | null) => {
      const groups = new Map<string | number, Device[]>();
      for (const d of free) {
        const k = key(d);
        if (k === null) continue;
        const g = groups.get(k) ?? [];
        g.push(d);
        groups.set(k, g);
      }
      // Fullest group that still fits; ties by its lowest device index.
      let best: Device[] | null = null;
      for (const g of groups.values())
        if (
          g.length >= n &&
          (!best || g.length < best.length || (g.length === best.length && g[0]!.index < best[0]!.index))
        )
          best = g;
      return best ? best.slice(0, n).map((d) => d.index) : null;
    };
    const sameDomain = inOne((d) => d.domain);
    if (sameDomain) return sameDomain;
    const sameNuma = inOne((d) => d.numa);
    if (sameNuma) return sameNuma;
    // Fewest domains: take from the largest free domains first.
    const byDomain = new Map<string, Device[]>();
    for (const d of free) {
      const k = d.domain ?? `#${d.index}`;
      const g = byDomain.get(k) ?? [];
      g.push(d);
      byDomain.set(k, g);
    }
    const ordered = [...byDomain.values()].sort((a, b) => b.length - a.length || a[0]!.index - b[0]!.index);
    return ordered
      .flat()
      .slice(0, n)
      .map((d) => d.index);
  }

  take(indices: readonly number[], holder: string): boolean {
    const ds = indices.map((i) => this.byIndex(i));
    if (ds.some((d) => !d || (d.holder !== null && d.holder !== holder))) return false;
    for (const d of ds) d!.holder = holder;
    return true;
  }

  release(holder: string): void {
    for (const d of this.devices) if (d.holder === holder) d.holder = null;
  }

  holders(): (string | null)[] {
    return this.devices.map((d) => d.holder);
  }

  restoreHolders(h: readonly (string | null)[]): void {
    this.devices.forEach((d, i) => {
      d.holder = h[i] ?? null;
    });
  }
}
