// The bind queue is worked on concurrently, so two requests for one pod — a bind, and the
// eviction a later scheduling cycle decided for that same pod — may be taken in either order.
// Requests of one pod are therefore carried out one at a time, and one decided at an older
// cluster generation than a request already carried out for that pod is stale: it is answered
// without touching the cluster (a bind the control plane has already taken back must not run).
// Kept in memory: after a restart the backends' own checks are what remains (pod on that node?
// already gone? an eviction decided before the bind of the pod's run: superseded-eviction.ts).
import type { BindRequestMessage } from "../protocol/bind-request.js";
import type { BindResultReport } from "./control-plane.js";

export class PodRequestOrder {
  /** pod → the newest generation carried out for it (insertion order = least recent first). */
  private readonly newest = new Map<string, number>();
  private readonly inFlight = new Map<string, Promise<unknown>>();

  constructor(private readonly capacity = 100_000) {}

  async run(
    request: BindRequestMessage,
    execute: () => Promise<BindResultReport>,
  ): Promise<BindResultReport> {
    const pod = `${request.job.id}/${request.pod.name}`;
    const before = this.inFlight.get(pod) ?? Promise.resolve();
    const turn = before
      .catch(() => {})
      .then(async () => {
        const newest = this.newest.get(pod);
        if (newest !== undefined && request.generation < newest) return superseded(request, newest);
        const result = await execute();
        this.remember(pod, Math.max(newest ?? request.generation, request.generation));
        return result;
      });
    this.inFlight.set(pod, turn);
    try {
      return await turn;
    } finally {
      if (this.inFlight.get(pod) === turn) this.inFlight.delete(pod);
    }
  }

  private remember(pod: string, generation: number): void {
    this.newest.delete(pod);
    this.newest.set(pod, generation);
    if (this.newest.size > this.capacity) this.newest.delete(this.newest.keys().next().value!);
  }
}

/** A stale bind fails (the pod must not run there); a stale eviction has nothing left to do. */
function superseded(request: BindRequestMessage, newest: number): BindResultReport {
  const why = `superseded: a request for pod ${request.pod.name} decided later (generation ${newest} > ${request.generation}) was carried out first`;
  return { bindRequest: request.id, ok: request.kind === "evict", message: why };
}
