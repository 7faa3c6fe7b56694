// Deletes the pods fleetq created once they have been finished for the configured time, so
// a namespace does not fill with the pods of every job ever run. Pods users created are
// theirs to delete. A deletion is conditional on the pod's uid: a newer pod of the same
// name is never touched.
import type { V1Pod } from "@kubernetes/client-node";
import type { Logger } from "pino";
import { finishedAt } from "./pod-state.js";

/** One hour; 0 keeps finished pods. */
export const DEFAULT_FINISHED_POD_TTL_MS = 3_600_000;

export type DeletePod = (namespace: string, name: string, uid: string) => Promise<void>;

export class FinishedPodReaper {
  /** uid → timer. */
  private readonly timers = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly ttlMs: number,
    private readonly deletePod: DeletePod,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** A finished pod fleetq created: deleted ttl after it finished (or after it was first seen
   * finished, when its status does not say when). */
  finished(pod: V1Pod): void {
    const uid = pod.metadata?.uid;
    if (this.ttlMs <= 0 || !uid || this.timers.has(uid)) return;
    const namespace = pod.metadata?.namespace ?? "";
    const name = pod.metadata?.name ?? "";
    const due = (finishedAt(pod) ?? this.now()) + this.ttlMs;
    const timer = setTimeout(() => void this.delete(namespace, name, uid), Math.max(0, due - this.now()));
    timer.unref();
    this.timers.set(uid, timer);
  }

  stop(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  private async delete(namespace: string, name: string, uid: string): Promise<void> {
    try {
      await this.deletePod(namespace, name, uid);
      this.log.debug({ pod: `${namespace}/${name}` }, "deleted a finished pod");
    } catch (err) {
      // Gone already, or replaced (uid precondition): nothing left to do.
      this.log.debug({ pod: `${namespace}/${name}`, err: String(err) }, "finished pod not deleted");
    } finally {
      this.timers.delete(uid);
    }
  }
}
