// Node scores from a preferred level (KAI: node_scoring.go). The preferred-level domains
// under the sub-group's lowest common domain, in the packing order, score
// floor(10·k/n)·10000 for the k-th of n; whole tiers so that no lower-priority plugin's
// score can reorder them. Kept per sub-group name for the rest of the job's attempt; a
// task takes the scores of its pod set or of the nearest ancestor set that has some.
import type { NodeInfo } from "../../api/node-info.js";
import type { PodInfo } from "../../api/pod-info.js";
import type { JobInfo, PodSet, SubGroupSet } from "../../api/podgroup-info.js";
import { SCORES } from "../scores.js";
import { type Domain, domainsAtLevel } from "./domain-tree.js";

export function preferredLevelScores(lcd: Domain, preferredLevel: string): Map<NodeInfo, number> {
  const domains = domainsAtLevel(lcd, preferredLevel);
  const scores = new Map<NodeInfo, number>();
  domains.forEach((d, i) => {
    const score = Math.floor(((i + 1) / domains.length) * 10) * SCORES.topology;
    for (const n of d.nodes) scores.set(n, score);
  });
  return scores;
}

/** The scores that apply to `task`: its pod set's, else the nearest ancestor's; null when none. */
export function scoresForTask(
  scores: ReadonlyMap<string, ReadonlyMap<NodeInfo, number>>,
  job: JobInfo | undefined,
  task: PodInfo,
): ReadonlyMap<NodeInfo, number> | null {
  const podSet: PodSet | undefined = job?.podSets.get(task.subGroup);
  if (!podSet) return null;
  const own = scores.get(podSet.name);
  if (own) return own;
  for (let s: SubGroupSet | null = podSet.parent; s; s = s.parent) {
    const found = scores.get(s.name);
    if (found) return found;
  }
  return null;
}
