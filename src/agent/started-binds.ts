// The binds a backend started recently, by when they started: a pod inventory read before
// a bind's pod shows up in the cluster's own lists still counts that pod as present.
import type { PodRef } from "./backends/types.js";

/** Long past any relist and report round. */
const KEEP_MS = 600_000;

export class StartedBinds {
  private entries: { at: number; ref: PodRef }[] = [];

  constructor(private readonly now: () => number = () => performance.now()) {}

  add(ref: PodRef): void {
    const at = this.now();
    this.entries.push({ at, ref });
    if (this.entries[0]!.at < at - KEEP_MS) this.entries = this.entries.filter((e) => e.at >= at - KEEP_MS);
  }

  since(at: number): PodRef[] {
    return this.entries.filter((entry) => entry.at >= at).map((entry) => entry.ref);
  }
}
