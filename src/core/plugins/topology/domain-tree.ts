// The domain tree of one topology (KAI: topology_plugin.go, topology_structs.go). A
// topology is an ordered list of node-label levels, coarse to fine; every distinct
// label path is a domain, the root holds them all. Nodes missing any level's label are
// outside the tree. Built once per session.
//
// Each domain keeps the free (idle + releasing) resources of its nodes as last
// refreshed: a call refreshes only the nodes that changed since (NodeInfo.version) and
// adds the differences up the tree, so it costs a version check per node of the
// subtree it works on instead of a full recount (KAI recounts the subtree each call).
import type { NodeInfo } from "../../api/node-info.js";
import type { TopologySpec } from "../../api/spec.js";

export const ROOT_LEVEL = "root";
export const ROOT_DOMAIN_ID = "root";

/** Resource amounts as the topology checks read them (a Resource has this shape too). */
export interface Amounts {
  cpu: number;
  memory: number;
  gpus: number;
  pods: number;
  /** MIG instances and extended resources. */
  scalars: Map<string, number> | null;
}

export const NO_AMOUNTS: Readonly<Amounts> = { cpu: 0, memory: 0, gpus: 0, pods: 0, scalars: null };

export const scalarOf = (a: Amounts, name: string): number => a.scalars?.get(name) ?? 0;

export class Domain implements Amounts {
  /** Sub-domains one level down; re-ordered in place by the packing sort, as in KAI. */
  readonly children: Domain[] = [];
  /** Every node of the subtree, in name order. Handed out as a node set: never mutate. */
  readonly nodes: NodeInfo[] = [];
  /** Free resources of the subtree as last refreshed (see TopologyTree.refreshFree). */
  cpu = 0;
  memory = 0;
  gpus = 0;
  pods = 0;
  scalars: Map<string, number> | null = null;
  /** Scratch for the packing sort: the share of this domain's free resources the tasks take. */
  packRatio = 0;

  constructor(
    /** Position in TopologyTree.domains. */
    readonly index: number,
    readonly id: string,
    /** This level's label value ("" for the root). */
    readonly value: string,
    readonly level: string,
    /** 0 for the root, i+1 for levels[i]. */
    readonly depth: number,
    readonly parent: Domain | null,
  ) {}

  /** The ancestor (or self) at `depth`. */
  ancestorAt(depth: number): Domain | null {
    let d: Domain | null = this;
    while (d && d.depth > depth) d = d.parent;
    return d && d.depth === depth ? d : null;
  }

  /** `d` is this domain or below it. */
  holds(d: Domain): boolean {
    return d.depth >= this.depth && d.ancestorAt(this.depth) === this;
  }

  addScalar(name: string, v: number): void {
    if (v === 0) return;
    this.scalars ??= new Map();
    const next = (this.scalars.get(name) ?? 0) + v;
    if (next === 0) this.scalars.delete(name);
    else this.scalars.set(name, next);
  }
}

export class TopologyTree {
  readonly name: string;
  /** Node label keys, coarse to fine. */
  readonly levels: readonly string[];
  readonly root: Domain;
  /** The deepest domain holding every node of the tree. */
  readonly span: Domain;
  readonly domains: Domain[] = [];
  /** level → domain id → domain, ids ascending; the root level holds the root. */
  readonly domainsByLevel = new Map<string, Map<string, Domain>>();
  /** Bumped by every subsetting call. */
  stamp = 0;
  /** Per session node index: the stamp of the last call whose node set held the node. */
  readonly inSet: Uint32Array;
  /** Per session node index: the lowest-level domain of the node, if it is in the tree. */
  private readonly leaves: (Domain | undefined)[];
  // Per session node index: what the node added to its domains' free sums, and its version then.
  private readonly seenVersion: Float64Array;
  private readonly addedCpu: Float64Array;
  private readonly addedMemory: Float64Array;
  private readonly addedGpus: Float64Array;
  private readonly addedPods: Float64Array;
  private readonly addedScalars: (Map<string, number> | null)[];

  constructor(spec: TopologySpec, nodes: readonly NodeInfo[]) {
    this.name = spec.name;
    this.levels = [...spec.levels];
    const n = nodes.length;
    this.inSet = new Uint32Array(n);
    this.leaves = new Array(n);
    this.seenVersion = new Float64Array(n).fill(-1);
    this.addedCpu = new Float64Array(n);
    this.addedMemory = new Float64Array(n);
    this.addedGpus = new Float64Array(n);
    this.addedPods = new Float64Array(n);
    this.addedScalars = new Array(n).fill(null);
    this.root = this.newDomain(ROOT_DOMAIN_ID, "", ROOT_LEVEL, null);
    this.domainsByLevel.set(ROOT_LEVEL, new Map([[ROOT_DOMAIN_ID, this.root]]));
    for (const level of this.levels)
      if (!this.domainsByLevel.has(level)) this.domainsByLevel.set(level, new Map());
    for (const node of nodes) if (isNodeInTopology(node, this.levels)) this.addNode(node);
    // Deterministic starting order (KAI's follows Go map order): ids ascending everywhere.
    sortChildrenById(this.root);
    let span = this.root;
    while (span.children.length === 1) span = span.children[0]!;
    this.span = span;
    for (const [level, byId] of this.domainsByLevel)
      this.domainsByLevel.set(level, new Map([...byId].sort(([a], [b]) => compareIds(a, b))));
  }

  /** Depth of a level label (root 0), or -1 when the topology has no such level. */
  depthOf(level: string): number {
    if (level === ROOT_LEVEL) return 0;
    const i = this.levels.indexOf(level);
    return i < 0 ? -1 : i + 1;
  }

  /** The node's lowest-level domain; undefined for a node outside the topology. */
  leafOf(node: NodeInfo): Domain | undefined {
    return this.leaves[node.index];
  }

  /** Bring the free sums of `d`'s subtree up to date with its nodes' current state. */
  refreshFree(d: Domain): void {
    for (const node of d.nodes) {
      const i = node.index;
      if (this.seenVersion[i] === node.version) continue;
      this.seenVersion[i] = node.version;
      const idle = node.idle;
      const rel = node.releasing;
      const cpu = idle.cpu + rel.cpu;
      const memory = idle.memory + rel.memory;
      const gpus = idle.gpus + rel.gpus;
      const pods = idle.pods + rel.pods;
      const dCpu = cpu - this.addedCpu[i]!;
      const dMemory = memory - this.addedMemory[i]!;
      const dGpus = gpus - this.addedGpus[i]!;
      const dPods = pods - this.addedPods[i]!;
      this.addedCpu[i] = cpu;
      this.addedMemory[i] = memory;
      this.addedGpus[i] = gpus;
      this.addedPods[i] = pods;
      const before = this.addedScalars[i];
      const after = idle.scalars || rel.scalars ? freeScalars(idle.scalars, rel.scalars) : null;
      this.addedScalars[i] = after;
      for (let a: Domain | null = this.leaves[i]!; a; a = a.parent) {
        a.cpu += dCpu;
        a.memory += dMemory;
        a.gpus += dGpus;
        a.pods += dPods;
        if (before) for (const [k, v] of before) a.addScalar(k, -v);
        if (after) for (const [k, v] of after) a.addScalar(k, v);
      }
    }
  }

  private newDomain(id: string, value: string, level: string, parent: Domain | null): Domain {
    const d = new Domain(this.domains.length, id, value, level, parent ? parent.depth + 1 : 0, parent);
    this.domains.push(d);
    return d;
  }

  private addNode(node: NodeInfo): void {
    this.root.nodes.push(node);
    let parent = this.root;
    const path: string[] = [];
    for (const level of this.levels) {
      const value = node.labels[level]!;
      path.push(value);
      const id = path.join(".");
      const byId = this.domainsByLevel.get(level)!;
      let d = byId.get(id);
      if (!d) {
        d = this.newDomain(id, value, level, parent);
        byId.set(id, d);
        parent.children.push(d);
      }
      d.nodes.push(node);
      parent = d;
    }
    this.leaves[node.index] = parent;
  }
}

function freeScalars(idle: Map<string, number> | null, rel: Map<string, number> | null): Map<string, number> {
  const out = new Map(idle ?? []);
  if (rel) for (const [k, v] of rel) out.set(k, (out.get(k) ?? 0) + v);
  return out;
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
