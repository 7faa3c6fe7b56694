// The domain tree of one topology (KAI: topology_plugin.go, topology_structs.go). A
// topology is an ordered list of node-label levels, coarse to fine; every distinct
// label path is a domain, the root holds them all. Nodes missing any level's label are
// outside the tree. Built once per session; per-call figures (free resources,
// allocatable pod counts) live on the domains and are valid only for the call whose
// stamp they carry, so a call never has to reset the whole tree.
import type { NodeInfo } from "../../api/node-info.js";
import { Resource } from "../../api/resources.js";
import type { TopologySpec } from "../../api/spec.js";

export const ROOT_LEVEL = "root";
export const ROOT_DOMAIN_ID = "root";
/** KAI's allocatablePodsNotSet: the job is judged by its resource ratio instead. */
export const PODS_NOT_SET = -1;

const EMPTY = new Resource();

export class Domain {
  /** Sub-domains one level down; re-ordered in place by each call's packing sort, as in KAI. */
  readonly children: Domain[] = [];
  /** Every node of the subtree, in name order. */
  readonly nodes: NodeInfo[] = [];
  /** Figures of the call with this stamp (older stamps read as "not computed"). */
  stamp = 0;
  private pods = PODS_NOT_SET;
  private freeSum: Resource = EMPTY;

  constructor(
    readonly id: string,
    readonly level: string,
    /** 0 for the root, i+1 for levels[i]. */
    readonly depth: number,
    readonly parent: Domain | null,
  ) {}

  /** Idle + releasing resources of the subtree, as computed in call `stamp` (empty otherwise). */
  free(stamp: number): Resource {
    return this.stamp === stamp ? this.freeSum : EMPTY;
  }

  /** Copies of the job's largest task the subtree holds, or PODS_NOT_SET. */
  allocatablePods(stamp: number): number {
    return this.stamp === stamp ? this.pods : PODS_NOT_SET;
  }

  setFree(stamp: number, free: Resource): void {
    this.stamp = stamp;
    this.freeSum = free;
    this.pods = PODS_NOT_SET;
  }

  setAllocatablePods(pods: number): void {
    this.pods = pods;
  }

  /** The ancestor (or self) at `depth`. */
  ancestorAt(depth: number): Domain | null {
    let d: Domain | null = this;
    while (d && d.depth > depth) d = d.parent;
    return d && d.depth === depth ? d : null;
  }
}

export class TopologyTree {
  readonly name: string;
  /** Node label keys, coarse to fine. */
  readonly levels: readonly string[];
  readonly root: Domain;
  /** level → domain id → domain, ids ascending; the root level holds the root. */
  readonly domainsByLevel = new Map<string, Map<string, Domain>>();
  /** Lowest-level domain of each node in the tree. */
  readonly leafOf = new Map<NodeInfo, Domain>();
  /** Bumped by every subsetting call; see Domain.stamp. */
  stamp = 0;

  constructor(spec: TopologySpec, nodes: readonly NodeInfo[]) {
    this.name = spec.name;
    this.levels = [...spec.levels];
    this.root = new Domain(ROOT_DOMAIN_ID, ROOT_LEVEL, 0, null);
    this.domainsByLevel.set(ROOT_LEVEL, new Map([[ROOT_DOMAIN_ID, this.root]]));
    for (const level of this.levels)
      if (!this.domainsByLevel.has(level)) this.domainsByLevel.set(level, new Map());
    for (const node of nodes) if (isNodeInTopology(node, this.levels)) this.addNode(node);
    // Deterministic starting order (KAI's follows Go map order): ids ascending everywhere.
    sortChildrenById(this.root);
    for (const [level, byId] of this.domainsByLevel)
      this.domainsByLevel.set(level, new Map([...byId].sort(([a], [b]) => compareIds(a, b))));
  }

  /** Depth of a level label (root 0), or -1 when the topology has no such level. */
  depthOf(level: string): number {
    if (level === ROOT_LEVEL) return 0;
    const i = this.levels.indexOf(level);
    return i < 0 ? -1 : i + 1;
  }

  domain(level: string, id: string): Domain | undefined {
    return this.domainsByLevel.get(level)?.get(id);
  }

  private addNode(node: NodeInfo): void {
    this.root.nodes.push(node);
    let parent = this.root;
    const path: string[] = [];
    for (let i = 0; i < this.levels.length; i++) {
      const level = this.levels[i]!;
      path.push(node.labels[level]!);
      const id = path.join(".");
      const byId = this.domainsByLevel.get(level)!;
      let d = byId.get(id);
      if (!d) {
        d = new Domain(id, level, i + 1, parent);
        byId.set(id, d);
        parent.children.push(d);
      }
      d.nodes.push(node);
      parent = d;
    }
    this.leafOf.set(node, parent);
  }
}

/** A node belongs to a topology when it carries a label for every level (any value). */
export function isNodeInTopology(node: NodeInfo, levels: readonly string[]): boolean {
  for (const level of levels) if (!Object.hasOwn(node.labels, level)) return false;
  return true;
}

function sortChildrenById(d: Domain): void {
  d.children.sort((a, b) => compareIds(a.id, b.id));
  for (const c of d.children) sortChildrenById(c);
}

export function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Domains at `level` below `d` (or `d` itself), in the tree's current child order
 * (KAI: getLevelDomains).
 */
export function domainsAtLevel(d: Domain, level: string, out: Domain[] = []): Domain[] {
  if (d.level === level) out.push(d);
  else for (const c of d.children) domainsAtLevel(c, level, out);
  return out;
}
