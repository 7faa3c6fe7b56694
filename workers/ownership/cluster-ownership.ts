// This worker's side of cluster ownership: its heartbeat renews its leases; each look at the live
// workers and owners (planOwnership) takes free clusters up to its share and gives up those
// beyond it. A cluster taken starts its work here (hooks.acquired); one given up, lost (the lease
// lapsed) or deleted stops it first (hooks.released: the running cycle finishes, then its caches
// go) and only then is the lease released, so two workers never run one cluster at once — and
// should a lapsed lease's cycle still try, its commit is refused (commitSession's lease check).
import type { Logger } from "pino";
import {
  acquireClusterLeases,
  leaveWorkers,
  ownershipView,
  releaseClusterLeases,
  renewWorkerLeases,
  type Store,
} from "../../src/store/index.js";
import { clusterOwned, clusterTakeovers } from "../metrics.js";
import { planOwnership } from "./plan-ownership.js";

export interface OwnershipOptions {
  workerId: string;
  /** A lease not renewed for this long lapses: a killed worker's clusters are taken then. */
  leaseMs: number;
  /** How often leases are renewed and the spread looked at again. */
  renewMs: number;
}

export interface OwnershipHooks {
  /** The worker now owns the cluster (a new epoch): start its work. */
  acquired(cluster: string): void;
  /** The worker gives the cluster up (or lost it): stop its work; resolve once none runs. */
  released(cluster: string, why: "rebalance" | "lost" | "stopping"): Promise<void>;
  /** Ownership changed here: other workers should look again now. */
  changed(): Promise<void>;
  /** How many clusters taken here are still loading (their first cycle runs). */
  loading(): number;
}

/** Clusters a worker loads at once: a full load is the largest read and build a worker does, and
 * several at once only share the same cores (and hold their memory together). A worker started
 * alone takes no more than this before the workers started with it are seen, so clusters are
 * not taken only to be given up. */
export const MAX_LOADING = 2;

interface Held {
  epoch: number;
  /** performance.now() past which the lease may have lapsed (renewal sent + leaseMs). */
  validUntil: number;
}

export class ClusterOwnership {
  private readonly held = new Map<string, Held>();
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> = Promise.resolve();
  private ticks = 0;
  private stopped = false;

  constructor(
    private readonly store: Store,
    private readonly o: OwnershipOptions,
    private readonly hooks: OwnershipHooks,
    private readonly log: Logger,
  ) {}

  /** Registers the worker. Clusters are taken from the next look on, so that workers started
   * together see each other before they take their shares. */
  async start(): Promise<void> {
    await this.tick();
    await this.hooks.changed();
    this.timer = setInterval(() => void this.tick(), this.o.renewMs);
    this.timer.unref();
  }

  /** Clusters this worker owns, by name. */
  owned(): string[] {
    return [...this.held.keys()].sort();
  }

  /** The lease a commit on the cluster must carry; null when the worker does not (surely) own it. */
  lease(cluster: string): { owner: string; epoch: number } | null {
    const h = this.held.get(cluster);
    if (!h || performance.now() > h.validUntil) return null;
    return { owner: this.o.workerId, epoch: h.epoch };
  }

  /** Renews, and looks at the spread again (calls are serialised). */
  tick(): Promise<void> {
    this.ticking = this.ticking
      .then(() => this.look())
      .catch((err) => this.log.warn({ err: (err as Error).message }, "could not renew cluster leases"));
    return this.ticking;
  }

  private async look(): Promise<void> {
    if (this.stopped) return;
    const sent = performance.now();
    const leases = new Map(
      (await renewWorkerLeases(this.store, this.o.workerId, this.o.leaseMs)).map((l) => [l.cluster, l]),
    );
    for (const [cluster, h] of this.held) {
      const l = leases.get(cluster);
      if (l && l.epoch === h.epoch) h.validUntil = sent + this.o.leaseMs;
      else await this.drop(cluster, "lost");
    }
    if (this.ticks++ === 0 || this.stopped) return;
    const plan = planOwnership(this.o.workerId, await ownershipView(this.store), new Set(this.held.keys()));
    for (const cluster of plan.release) await this.drop(cluster, "rebalance");
    if (plan.release.length) {
      await releaseClusterLeases(this.store, this.o.workerId, plan.release);
      await this.hooks.changed();
    }
    const acquire = plan.acquire.slice(0, Math.max(0, MAX_LOADING - this.hooks.loading()));
    if (!acquire.length || this.stopped) return;
    const taken = await acquireClusterLeases(this.store, this.o.workerId, acquire, this.o.leaseMs);
    for (const l of taken) {
      this.held.set(l.cluster, { epoch: l.epoch, validUntil: sent + this.o.leaseMs });
      clusterOwned.set({ cluster: l.cluster, worker: this.o.workerId }, 1);
      clusterTakeovers.inc({ worker: this.o.workerId });
      this.log.info({ cluster: l.cluster, epoch: l.epoch }, "took the cluster over");
      this.hooks.acquired(l.cluster);
    }
  }

  private async drop(cluster: string, why: "rebalance" | "lost" | "stopping"): Promise<void> {
    this.held.delete(cluster);
    clusterOwned.remove({ cluster, worker: this.o.workerId });
    await this.hooks.released(cluster, why);
    if (why === "lost") this.log.warn({ cluster }, "lost the cluster's lease: its cycles stopped here");
    else this.log.info({ cluster, why }, "gave the cluster up");
  }

  /** Stops every cluster's work here, then releases the leases at once (others take them now). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.stopped = true;
    await this.ticking;
    for (const cluster of [...this.held.keys()]) await this.drop(cluster, "stopping");
    try {
      await leaveWorkers(this.store, this.o.workerId);
      await this.hooks.changed();
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, "could not release the leases; they lapse");
    }
  }
}
