// What the control plane still has to learn about the cluster's nodes. A complete report
// replaces the API's node list (so it also removes vanished nodes); in between, only the
// nodes that changed are sent. A node deletion forces the next report to be complete,
// because NodeReport has no way to say "gone".
import type { NodeInventory } from "./backends/types.js";

export interface InventoryReport {
  nodes: NodeInventory[];
  complete: boolean;
}

export class InventoryState {
  private readonly nodes = new Map<string, NodeInventory>();
  private readonly changed = new Set<string>();
  private completeDue = false;

  get pending(): boolean {
    return this.completeDue || this.changed.size > 0;
  }

  apply(nodes: NodeInventory[], complete: boolean, deleted: string[]): void {
    if (complete) {
      this.nodes.clear();
      this.changed.clear();
      this.completeDue = true;
    }
    for (const node of nodes) {
      this.nodes.set(node.name, node);
      if (!complete) this.changed.add(node.name);
    }
    for (const name of deleted) {
      this.nodes.delete(name);
      this.changed.delete(name);
      this.completeDue = true;
    }
  }

  /** Takes the report to send now; call `failed(report)` if it could not be sent. */
  take(): InventoryReport | null {
    if (this.completeDue) {
      this.completeDue = false;
      this.changed.clear();
      return { nodes: [...this.nodes.values()], complete: true };
    }
    if (this.changed.size === 0) return null;
    const nodes: NodeInventory[] = [];
    for (const name of this.changed) {
      const node = this.nodes.get(name);
      if (node) nodes.push(node);
    }
    this.changed.clear();
    return { nodes, complete: false };
  }

  /** The next report is complete (after a silence the control plane may hold the cluster LOST
   * until it has one). */
  resend(): void {
    this.completeDue = true;
    this.changed.clear();
  }

  failed(report: InventoryReport): void {
    if (report.complete) this.completeDue = true;
    else for (const node of report.nodes) if (this.nodes.has(node.name)) this.changed.add(node.name);
  }
}
