// The simulated cluster as an agent backend: one setTimeout, always armed for the earliest
// pod end, drives every pod's lifetime. The clock is injectable so tests can step time.
import type { BindRequestMessage } from "../../../protocol/bind-request.js";
import { StartedBinds } from "../../started-binds.js";
import type { BackendEvents, ClusterBackend, RequestOutcome } from "../types.js";
import { expandNodes, loadClusterFile, type ClusterFile } from "./cluster-file.js";
import { SimulatedCluster, type RequestEffect } from "./simulated-cluster.js";

export interface SimulationClock {
  now(): number;
}

const REAL_CLOCK: SimulationClock = { now: () => Date.now() };
/** setTimeout's longest delay. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class SimulatedBackend implements ClusterBackend {
  readonly kind = "simulated";
  private events: BackendEvents | null = null;
  private timer: NodeJS.Timeout | null = null;
  private armedFor: number | null = null;
  private readonly binds = new StartedBinds();

  constructor(
    readonly cluster: SimulatedCluster,
    /** Labels of the cluster (registerCluster). */
    readonly labels: Record<string, string> = {},
    private readonly clock: SimulationClock = REAL_CLOCK,
  ) {}

  static fromClusterFile(file: ClusterFile, clock?: SimulationClock): SimulatedBackend {
    return new SimulatedBackend(
      new SimulatedCluster(expandNodes(file), file.defaultPodDurationSeconds),
      file.labels,
      clock,
    );
  }

  static async load(path: string, clock?: SimulationClock): Promise<SimulatedBackend> {
    return SimulatedBackend.fromClusterFile(await loadClusterFile(path), clock);
  }

  async start(events: BackendEvents): Promise<void> {
    this.events = events;
    events.nodes(this.cluster.listNodes(), true, []);
    // Like a real cluster, the pods it runs are complete: a cluster started empty has none.
    events.podInventory?.({
      pods: () => this.cluster.listPods(),
      bindsSince: (at) => this.binds.since(at),
    });
    this.tick();
  }

  async bind(request: BindRequestMessage): Promise<RequestOutcome> {
    this.binds.add({ jobId: request.job.id, pod: request.pod.name });
    return this.apply(this.cluster.bind(request, this.clock.now()));
  }

  async evict(request: BindRequestMessage): Promise<RequestOutcome> {
    return this.apply(this.cluster.evict(request));
  }

  /** Cordons or uncordons a virtual node and reports the change. */
  setUnschedulable(node: string, unschedulable: boolean): void {
    const inventory = this.cluster.setUnschedulable(node, unschedulable);
    this.events?.nodes([inventory], false, []);
  }

  /** Ends the pods whose time is up and re-arms the timer for the next one. */
  tick(): void {
    const changes = this.cluster.advance(this.clock.now());
    if (changes.length > 0) this.events?.podStates(changes);
    this.arm();
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.armedFor = null;
    this.events = null;
  }

  private apply(effect: RequestEffect): RequestOutcome {
    if (effect.changes.length > 0) this.events?.podStates(effect.changes);
    this.arm();
    return effect.outcome;
  }

  private arm(): void {
    // A test's clock is stepped by calling tick(); only real time arms a real timer.
    if (!this.events || this.clock !== REAL_CLOCK) return;
    const next = this.cluster.nextDeadline();
    if (next === null || next === this.armedFor) return;
    if (this.timer) clearTimeout(this.timer);
    this.armedFor = next;
    this.timer = setTimeout(
      () => {
        this.timer = null;
        this.armedFor = null;
        this.tick();
      },
      Math.min(MAX_TIMER_MS, Math.max(0, next - this.clock.now())),
    );
  }
}
