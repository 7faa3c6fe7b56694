// Representative-pod counts per domain (KAI: calcSubTreeAllocatable), kept per pod shape
// across calls: a node's count is recomputed only when the node changed since
// (NodeInfo.version), and the difference is added up the tree.
import type { Domain, TopologyTree } from "./domain-tree.js";
import { nodeAccommodation, type RepresentativePod, representativeKey } from "./job-demand.js";

/** Most distinct representative shapes kept per tree. */
const MAX_SHAPES = 8;

interface ShapeCounts {
  rep: RepresentativePod;
  /** Per node index: the node's version when counted (-1: never). */
  version: Float64Array;
  count: Int32Array;
  /** Per domain index: the sum of its nodes' counts. */
  sums: Float64Array;
}

export class PodCounts {
  private readonly shapes = new Map<string, ShapeCounts>();

  constructor(
    private readonly tree: TopologyTree,
    private readonly nodeCount: number,
  ) {}

  /** Counts of `rep` for every domain of `d`'s subtree, brought up to date; read with the returned function. */
  refresh(d: Domain, rep: RepresentativePod): (domain: Domain) => number {
    const s = this.shapeFor(rep);
    for (const node of d.nodes) {
      const i = node.index;
      if (s.version[i] === node.version) continue;
      s.version[i] = node.version;
      const count = nodeAccommodation(s.rep, node);
      const delta = count - s.count[i]!;
      s.count[i] = count;
      if (delta !== 0)
        for (let a: Domain | null = this.tree.leafOf(node)!; a; a = a.parent) s.sums[a.index]! += delta;
    }
    const sums = s.sums;
    return (domain) => sums[domain.index]!;
  }

  private shapeFor(rep: RepresentativePod): ShapeCounts {
    const key = representativeKey(rep);
    let s = this.shapes.get(key);
    if (s) {
      this.shapes.delete(key); // most recently used last
    } else {
      s = {
        rep,
        version: new Float64Array(this.nodeCount).fill(-1),
        count: new Int32Array(this.nodeCount),
        sums: new Float64Array(this.tree.domains.length),
      };
      if (this.shapes.size >= MAX_SHAPES) this.shapes.delete(this.shapes.keys().next().value!);
    }
    this.shapes.set(key, s);
    return s;
  }
}
