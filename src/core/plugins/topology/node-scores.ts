// Node scores from a preferred level (KAI: node_scoring.go). The preferred-level domains
// under the sub-group's lowest common domain, in the packing order, score
// floor(10·k/n)·10000 for the k-th of n; whole tiers so that no lower-priority plugin's
// score can reorder them. Kept per sub-group name for the rest of the job's attempt; a
// task takes the scores of its pod set or of the nearest ancestor set that has some.
import type { NodeInfo } from "../../api/node-info.js";
import type { PodInfo } from "../../api/pod-info.js";
import type { JobInfo, PodSet, SubGroupSet } from "../../api/podgroup-info.js";
import { SCORES } from "../scores.js";
import { type Domain, domainsAtLevel, type TopologyTree } from "./domain-tree.js";

/** Scores of the nodes under one lowest common domain, held per preferred-level domain. */
export class PreferredLevelScores {
  private readonly byDomain = new Map<Domain, number>();
  private readonly depth: number;

  constructor(
    private readonly tree: TopologyTree,
    lcd: Domain,
    preferredLevel: string,
  ) {
    this.depth = tree.depthOf(preferredLevel);
    const domains = domainsAtLevel(lcd, preferredLevel);
    domains.forEach((d, i) => {
      this.byDomain.set(d, Math.floor(((i + 1) / domains.length) * 10) * SCORES.topology);
    });
  }

  /** 0 for a node outside the scored domains (KAI errors there, which scores the node 0). */
  of(node: NodeInfo): number {
    const d = this.tree.leafOf(node)?.ancestorAt(this.depth);
    return (d && this.byDomain.get(d)) ?? 0;
  }
}

/**
 * The scores set while placing one job, by sub-group name (KAI keys them by name alone
 * and clears them before each job; the job is kept too so that scores never leak into
 * another job's pods).
 */
export class AttemptScores {
  private job: string | null = null;
  private readonly bySubGroup = new Map<string, PreferredLevelScores>();

  /** A new attempt (KAI: preJobAllocationFn). */
  reset(job: JobInfo | null): void {
    this.job = job?.uid ?? null;
    this.bySubGroup.clear();
  }

  set(job: JobInfo, subGroup: string, scores: PreferredLevelScores): void {
    if (this.job !== job.uid) this.reset(job);
    this.bySubGroup.set(subGroup, scores);
  }

  /** The scores for `task`: its pod set's, else the nearest ancestor set's; null when none. */
  /** No sub-group of the current attempt has preferred-level scores. */
  get empty(): boolean {
    return this.bySubGroup.size === 0;
  }

  forTask(job: JobInfo | undefined, task: PodInfo): PreferredLevelScores | null {
    if (this.bySubGroup.size === 0 || !job || job.uid !== this.job) return null;
    const podSet: PodSet | undefined = job.podSet(task.subGroup);
    if (!podSet) return null;
    const own = this.bySubGroup.get(podSet.name);
    if (own) return own;
    for (let s: SubGroupSet | null = podSet.parent; s; s = s.parent) {
      const found = this.bySubGroup.get(s.name);
      if (found) return found;
    }
    return null;
  }
}
