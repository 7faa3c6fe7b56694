// Why a task found no node: per-node reasons, summarised the way KAI words them. The
// reason histogram is kept as nodes are recorded, since thousands of nodes can fail
// for one task and the summary is read on every failed attempt.

export const RESOURCES_NOT_FOUND = "no nodes with enough resources were found";
export const DEFAULT_POD_ERROR = "Unable to schedule pod";

export class TaskFitErrors {
  /** A reason that applies to every node (e.g. a pre-predicate), replacing the default message. */
  err: string | null = null;
  /** Node index → its short reasons (the last recorded). */
  private readonly byNode: (readonly string[] | undefined)[] = [];
  private readonly counts = new Map<string, number>();

  setNodeError(nodeIndex: number, reasons: readonly string[]): void {
    const prev = this.byNode[nodeIndex];
    if (prev === reasons) return;
    if (prev) for (const r of prev) this.counts.set(r, this.counts.get(r)! - 1);
    this.byNode[nodeIndex] = reasons;
    for (const r of reasons) this.counts.set(r, (this.counts.get(r) ?? 0) + 1);
  }

  /** "no nodes with enough resources were found: 2 node(s) didn't have enough resources: GPUs." */
  message(): string {
    const hist = [...this.counts]
      .filter(([, n]) => n > 0)
      .map(([r, n]) => `${n} ${r}`)
      .sort();
    let msg = this.err ?? RESOURCES_NOT_FOUND;
    if (hist.length) msg += `: ${hist.join(". \n")}.`;
    return msg;
  }

  /** Reason → number of nodes, for structured "why pending" output. */
  histogram(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [r, n] of this.counts) if (n > 0) out[r] = n;
    return out;
  }
}
