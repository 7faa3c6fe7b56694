// Splitting a node set into the domains a (sub-)group may be placed in, in the order to
// try them (KAI: topology plugin's subSetNodesFn, job_filtering.go and common.go).
import type { NodeInfo } from "../../api/node-info.js";
import type { PodInfo } from "../../api/pod-info.js";
import type { JobInfo, PodSet, TopologyConstraint } from "../../api/podgroup-info.js";
import { isActiveAllocated } from "../../api/status.js";
import type { SubGroupTarget } from "../../framework/callbacks.js";
import { domainFits, domainMisfit, type FitContext, fitsInScope, sortForPacking } from "./domain-fit.js";
import { type Domain, NO_AMOUNTS, ROOT_LEVEL, type TopologyTree } from "./domain-tree.js";
import { asksOnlyAPod, demandOf, isHomogeneous, ratioToFree, representativePod } from "./job-demand.js";
import { levelNotInTopology, noConstraintLevels, noTopologyMatch } from "./messages.js";
import { type AttemptScores, PreferredLevelScores } from "./node-scores.js";
import { PodCounts } from "./pod-counts.js";

export interface SubsetResult {
  sets: NodeInfo[][];
  error: string | null;
}

/** Per-domain fit errors KAI would list when nothing fits; more are summarised in one line. */
const MAX_LISTED_DOMAIN_ERRORS = 16;

export class TopologySubsetter {
  private readonly podCounts = new Map<TopologyTree, PodCounts>();

  constructor(
    private readonly trees: ReadonlyMap<string, TopologyTree>,
    private readonly nodeByName: ReadonlyMap<string, NodeInfo>,
    /** The session's node list (never mutated). */
    private readonly allNodes: readonly NodeInfo[],
    /** Preferred-level node scores of the job being placed (read by the node order). */
    private readonly scores: AttemptScores,
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

    // Mark the node set's nodes in the tree and find the domain spanning them (known
    // already for the session's whole node list, which allocate passes every time).
    const stamp = ++tree.stamp;
    let lcd: Domain | null = null;
    let marked = 0;
    if (nodes === this.allNodes) {
      lcd = tree.span;
      marked = tree.root.nodes.length;
    } else
      for (const n of nodes) {
        const leaf = tree.leafOf(n);
        if (!leaf) continue;
        tree.inSet[n.index] = stamp;
        marked++;
        if (lcd !== tree.root) lcd = lcd ? commonAncestor(lcd, leaf) : leaf;
      }
    lcd = capLowestCommonDomain(tree, lcd ?? tree.root, constraint.preferred);

    tree.refreshFree(lcd);
    const ctx: FitContext = {
      scope: lcd,
      total: demandOf(tasks),
      tasksCount: tasks.length,
      podsOf: null,
      subGroup: target.name,
    };
    if (isHomogeneous(tasks)) {
      const rep = representativePod(tasks);
      if (typeof rep === "string") return { sets: [], error: rep };
      const n = tasks.length;
      ctx.podsOf = asksOnlyAPod(rep) ? (d) => n * d.nodes.length : this.podCountsOf(tree).refresh(lcd, rep);
    }
    if (!domainFits(lcd, ctx)) {
      const where = lcd === tree.root ? "the cluster" : lcd.id;
      const why = `not enough resources in ${where} to allocate the job`;
      job.addFitError(noTopologyMatch(job, target.name, tree.name, constraint.required, why));
      return { sets: [], error: null };
    }

    // One packing order serves both the domain list and the preferred-level scores.
    sortForPacking(lcd, ctx, constraint.preferred ?? constraint.required);
    if (constraint.preferred)
      this.scores.set(job, target.name, new PreferredLevelScores(tree, lcd, constraint.preferred));

    const found = this.allocatableDomains(job, target, constraint, tree, ctx);
    if (typeof found === "string") return { sets: [], error: found };
    // When every node of the tree (or of the scope) is in the node set, a domain's own
    // node list is its part of the set; otherwise keep the marked nodes.
    const allInSet = nodes === this.allNodes;
    const scopeInSet = marked === lcd.nodes.length;
    return {
      sets: found.map((d) =>
        allInSet || (scopeInSet && lcd.holds(d))
          ? d.nodes
          : d.nodes.filter((x) => tree.inSet[x.index] === stamp),
      ),
      error: null,
    };
  }

  private podCountsOf(tree: TopologyTree): PodCounts {
    let c = this.podCounts.get(tree);
    if (!c) {
      c = new PodCounts(tree, this.allNodes.length);
      this.podCounts.set(tree, c);
    }
    return c;
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
    ctx: FitContext,
  ): Domain[] | string {
    const levels = relevantLevels(target.name, constraint, tree);
    if (typeof levels === "string") return levels;
    const wanted: boolean[] = [];
    for (const l of levels) wanted[tree.depthOf(l)] = true;
    const deepest = wanted.length - 1;

    // A group already running somewhere must stay in the required-level domain(s) it runs in.
    const requiredDepth = constraint.required ? tree.depthOf(constraint.required) : -1;
    const running = requiredDepth >= 0 ? this.runningDomains(target.podSets, tree, requiredDepth) : null;
    const eligible = (d: Domain) => !running || running.has(d.ancestorAt(requiredDepth)!);

    // Domains outside this call's subtree have no figures, so only a request of nothing
    // fits them; only then must the whole tree be searched, as KAI does.
    const global = ratioToFree(ctx.total, NO_AMOUNTS) <= 1;
    const fits = global ? (d: Domain) => domainFits(d, ctx) : (d: Domain) => fitsInScope(d, ctx);
    // Each level's fitting domains in tree order (a depth-first walk meets the domains of
    // one level in the same order as a breadth-first one). Pod counts only shrink going
    // down, so below a domain that cannot hold the tasks none can.
    const byDepth: Domain[][] = Array.from({ length: deepest + 1 }, () => []);
    const visit = (d: Domain): void => {
      if (running && d.depth >= requiredDepth && !eligible(d)) return;
      const ok = fits(d);
      if (ok && wanted[d.depth]) byDepth[d.depth]!.push(d);
      if ((ok || !ctx.podsOf) && d.depth < deepest) for (const c of d.children) visit(c);
    };
    visit(global ? tree.root : ctx.scope);
    const domains = byDepth.reverse().flat();
    if (domains.length > 0) return domains;

    // Nothing fits: why each domain of the top level could not (KAI lists them all), then the summary.
    const top = levels[levels.length - 1]!;
    let listed = 0;
    let unlisted = 0;
    for (const d of tree.domainsByLevel.get(top)?.values() ?? []) {
      if (!eligible(d) || domainFits(d, ctx)) continue;
      if (listed === MAX_LISTED_DOMAIN_ERRORS) unlisted++;
      else {
        job.addFitError(domainMisfit(d, ctx)!);
        listed++;
      }
    }
    if (unlisted > 0) job.addFitError(`${unlisted} more ${top} domains cannot hold the job`);
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
        const leaf = node && tree.leafOf(node);
        const d = leaf?.ancestorAt(requiredDepth);
        if (d) out.add(d);
      }
    return out;
  }
}

function commonAncestor(a: Domain, b: Domain): Domain {
  while (a.depth > b.depth) a = a.parent!;
  while (b.depth > a.depth) b = b.parent!;
  while (a !== b) {
    a = a.parent!;
    b = b.parent!;
  }
  return a;
}

/**
 * KAI's lowest common domain (lowestCommonDomainID) compares the nodes' labels level by
 * level, top down, stopping at the preferred level (no need to look deeper) and at a
 * level whose common value is empty: the nodes' deepest common ancestor, cut there.
 */
function capLowestCommonDomain(tree: TopologyTree, lcd: Domain, preferred: string | null): Domain {
  const preferredDepth = preferred ? tree.depthOf(preferred) : -1;
  if (preferredDepth > 0 && lcd.depth > preferredDepth) lcd = lcd.ancestorAt(preferredDepth)!;
  let cut = lcd;
  for (let a: Domain | null = lcd; a && a.depth > 0; a = a.parent) if (a.value === "") cut = a.parent!;
  return cut;
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
