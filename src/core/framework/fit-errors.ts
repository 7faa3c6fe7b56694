// Why a task found no node: per-node reasons, summarised the way KAI words them.

export const RESOURCES_NOT_FOUND = "no nodes with enough resources were found";
export const DEFAULT_POD_ERROR = "Unable to schedule pod";

export class TaskFitErrors {
  /** A reason that applies to every node (e.g. a pre-predicate), replacing the default message. */
  err: string | null = null;
  /** node → short reasons. */
  readonly nodes = new Map<string, string[]>();

  setNodeError(node: string, reasons: string[]): void {
    this.nodes.set(node, reasons);
  }

  merge(o: TaskFitErrors): void {
    for (const [n, r] of o.nodes) this.nodes.set(n, r);
    if (o.err) this.err = o.err;
  }

  /** "no nodes with enough resources were found: 2 node(s) didn't have enough resources: GPUs." */
  message(): string {
    const counts = new Map<string, number>();
    for (const reasons of this.nodes.values()) for (const r of reasons) counts.set(r, (counts.get(r) ?? 0) + 1);
    const hist = [...counts].map(([r, n]) => `${n} ${r}`).sort();
    let msg = this.err ?? RESOURCES_NOT_FOUND;
    if (hist.length) msg += `: ${hist.join(". \n")}.`;
    return msg;
  }

  /** Reason → number of nodes, for structured "why pending" output. */
  histogram(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const reasons of this.nodes.values()) for (const r of reasons) out[r] = (out[r] ?? 0) + 1;
    return out;
  }
}
