// A queue of the tree as the session sees it.
import type { QueueSpec } from "./spec.js";

export class QueueInfo {
  readonly name: string;
  readonly parent: string | null;
  readonly children: string[] = [];
  readonly priority: number;
  readonly createdAt: number;
  /** Position in the snapshot's queue list: the creation-order tie-break. */
  readonly order: number;
  readonly spec: QueueSpec;

  constructor(spec: QueueSpec, order: number) {
    this.spec = spec;
    this.name = spec.name;
    this.parent = spec.parent;
    this.priority = spec.priority;
    this.createdAt = spec.createdAt;
    this.order = order;
  }

  get isLeaf(): boolean {
    return this.children.length === 0;
  }
}
