// Splitting a node set into the domains a (sub-)group may be placed in, in the order to
// try them (KAI: topology plugin's subSetNodesFn, job_filtering.go and common.go).
import type { NodeInfo } from "../../api/node-info.js";
import type { PodInfo } from "../../api/pod-info.js";
import type { JobInfo, PodSet, TopologyConstraint } from "../../api/podgroup-info.js";
import { Resource } from "../../api/resources.js";
import { isActiveAllocated } from "../../api/status.js";
import type { SubGroupTarget } from "../../framework/callbacks.js";
import {
  type CallDemand,
  computeAllocatablePods,
  computeFree,
  domainFits,
  domainMisfit,
  sortForPacking,
} from "./domain-fit.js";
import { type Domain, ROOT_LEVEL, type TopologyTree } from "./domain-tree.js";
import { demandOf, isHomogeneous, ratioToFree, representativePod } from "./job-demand.js";
import { levelNotInTopology, noConstraintLevels, noTopologyMatch } from "./messages.js";
import { preferredLevelScores } from "./node-scores.js";

export interface SubsetResult {
  sets: NodeInfo[][];
  error: string | null;
}

/** Per-domain fit errors KAI would list when nothing fits; more are summarised in one line. */
const MAX_LISTED_DOMAIN_ERRORS = 16;

export class TopologySubsetter {
  constructor(
    private readonly trees: ReadonlyMap<string, TopologyTree>,
    private readonly nodeByName: ReadonlyMap<string, NodeInfo>,
    /** Sub-group name → node scores of its preferred level (read by the node order). */
    private readonly scores: Map<string, Map<NodeInfo, number>>,
  ) {}

  subset(
    job: JobInfo,
    target: SubGroupTarget,
    tasks: readonly PodInfo[],
    nodes: readonly NodeInfo[],
  ): SubsetResult {
    const constraint = target.topology;
    if (!constraint) return { sets: [nodes as NodeInfo[]], error: null };
    const tree = this.trees.get(constraint.topology);
    if (!tree) {
      job.addFitError(`Requested topology ${constraint.topology} does not exist`);
      return { sets: [], error: null };
    }
    if (tasks.length === 0) return { sets: [nodes as NodeInfo[]], error: null };

    const valid = new Set<NodeInfo>();
    for (const n of nodes) if (tree.leafOf.has(n)) valid.add(n);
    const lcd = lowestCommonDomain(tree, valid, constraint.preferred);
    if (!lcd) return { sets: [], error: `domain not found for node set in topology ${tree.name}` };

    const demand: CallDemand = {
      stamp: ++tree.stamp,
      total: demandOf(tasks),
      tasksCount: tasks.length,
      subGroup: target.name,
    };
    computeFree(lcd, demand.stamp);
    if (isHomogeneous(tasks)) {
      const rep = representativePod(tasks);
      if (typeof rep === "string") return { sets: [], error: rep };
      computeAllocatablePods(lcd, rep, tasks.length);
    }
    if (!domainFits(lcd, demand)) {
      const where = lcd === tree.root ? "the cluster" : lcd.id;
      job.addFitError(
        noTopologyMatch(
          job,
          target.name,
          tree.name,
          constraint.required,
          `not enough resources in ${where} to allocate the job`,
        ),
      );
      return { sets: [], error: null };
    }

    // One packing order serves both the domain list and the preferred-level scores.
    sortForPacking(lcd, demand, constraint.preferred ?? constraint.required);
    if (constraint.preferred) this.scores.set(target.name, preferredLevelScores(lcd, constraint.preferred));

    const found = this.allocatableDomains(job, target, constraint, tree, lcd, demand);
    if (typeof found === "string") return { sets: [], error: found };
    return { sets: found.map((d) => d.nodes.filter((n) => valid.has(n))), error: null };
  }

  /**
   * The domains, from the preferred (or required) level up to the required level (or
   * the root), that can hold the tasks, deepest level first and in the tree's packing
   * order within a level (KAI: getJobAllocatableDomains + sortDomainInfos). Adds KAI's
   * fit errors when there is none.
   */
  private allocatableDomains(
    job: JobInfo,
    target: SubGroupTarget,
    constraint: TopologyConstraint,
    tree: TopologyTree,
    lcd: Domain,
    demand: CallDemand,
  ): Domain[] | string {
    const levels = relevantLevels(target.name, constraint, tree);
    if (typeof levels === "string") return levels;
    const wanted = new Set(levels);
    const deepest = Math.max(...levels.map((l) => tree.depthOf(l)));

    // A group already running somewhere must stay in the required-level domain(s) it runs in.
    const requiredDepth = constraint.required ? tree.depthOf(constraint.required) : -1;
    const running = requiredDepth >= 0 ? this.runningDomains(target.podSets, tree, requiredDepth) : null;
    const eligible = (d: Domain) => !running || running.has(d.ancestorAt(requiredDepth)!);

    // Domains outside this call's subtree have no figures, so only a request of nothing
    // fits them; only then must the whole tree be searched, as KAI does.
    const scope = ratioToFree(demand.total, new Resource()) <= 1 ? tree.root : lcd;
    // Breadth-first from the scope: each level's fitting domains, deeper levels in front.
    let domains: Domain[] = [];
    let frontier: Domain[] = [scope];
    while (frontier.length > 0 && frontier[0]!.depth <= deepest) {
      const next: Domain[] = [];
      const fitting: Domain[] = [];
      for (const d of frontier) {
        if (wanted.has(d.level) && eligible(d) && domainFits(d, demand)) fitting.push(d);
        for (const c of d.children) next.push(c);
      }
      if (fitting.length > 0) domains = fitting.concat(domains);
      frontier = next;
    }
    if (domains.length > 0) return domains;

    // Nothing fits: list why each domain of the top level could not, then the summary.
    const top = levels[levels.length - 1]!;
    const misfits: string[] = [];
    for (const d of tree.domainsByLevel.get(top)?.values() ?? []) {
      if (!eligible(d)) continue;
      const why = domainMisfit(d, demand);
      if (why) misfits.push(why);
    }
    for (const m of misfits.slice(0, MAX_LISTED_DOMAIN_ERRORS)) job.addFitError(m);
    if (misfits.length > MAX_LISTED_DOMAIN_ERRORS)
      job.addFitError(`${misfits.length - MAX_LISTED_DOMAIN_ERRORS} more ${top} domains cannot hold the job`);
    job.addFitError(noTopologyMatch(job, target.name, tree.name, constraint.required));
    return [];
  }

  /** Required-level domains holding a placed (active, allocated) task of the pod sets. */
  private runningDomains(
    podSets: readonly PodSet[],
    tree: TopologyTree,
    requiredDepth: number,
  ): Set<Domain> | null {
    if (!podSets.some((ps) => ps.activeAllocated > 0)) return null;
    const out = new Set<Domain>();
    for (const ps of podSets)
      for (const p of ps.pods) {
        if (!isActiveAllocated(p.status) || !p.nodeName) continue;
        const node = this.nodeByName.get(p.nodeName);
        const leaf = node && tree.leafOf.get(node);
        const d = leaf?.ancestorAt(requiredDepth);
        if (d) out.add(d);
      }
    return out;
  }
}

/**
 * The deepest domain holding every valid node, looking no deeper than the preferred
 * level (KAI: lowestCommonDomainID). An empty set maps to the root.
 */
export function lowestCommonDomain(
  tree: TopologyTree,
  valid: ReadonlySet<NodeInfo>,
  preferred: string | null,
): Domain | null {
  const parts: string[] = [];
  for (const level of tree.levels) {
    let value = "";
    let allMatch = true;
    for (const n of valid) {
      const v = n.labels[level] ?? "";
      if (value === "") value = v;
      if (v !== value) {
        allMatch = false;
        break;
      }
    }
    if (!allMatch || value === "") break;
    parts.push(value);
    if (preferred === level) break;
  }
  if (parts.length === 0) return tree.root;
  return tree.domain(tree.levels[parts.length - 1]!, parts.join(".")) ?? null;
}

/**
 * Levels to take domains from, finest first: from the preferred level (or the required
 * one) up to the required level, or up to the root without one (KAI:
 * calculateRelevantDomainLevels). A string is a configuration error.
 */
export function relevantLevels(
  subGroup: string,
  c: TopologyConstraint,
  tree: TopologyTree,
): string[] | string {
  if (!c.required && !c.preferred) return noConstraintLevels(subGroup, tree.name);
  const finestFirst = [...tree.levels].reverse();
  finestFirst.push(ROOT_LEVEL);
  let foundRequired = false;
  let foundPreferred = false;
  const out: string[] = [];
  for (const level of finestFirst) {
    if (level === c.preferred) foundPreferred = true;
    if (level === c.required) foundRequired = true;
    if (foundPreferred || foundRequired) out.push(level);
    if (foundRequired) break;
  }
  if (c.required && !foundRequired) return levelNotInTopology(subGroup, tree.name, "required", c.required);
  if (c.preferred && !foundPreferred)
    return levelNotInTopology(subGroup, tree.name, "preferred", c.preferred);
  return out;
}
