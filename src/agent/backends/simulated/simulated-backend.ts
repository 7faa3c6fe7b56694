// The simulated cluster as an agent backend: one setTimeout, always armed for the earliest
// pod end, drives every pod's lifetime. The clock is injectable so tests can step time.
import type { BindRequestMessage } from "../../../protocol/bind-request.js";
import { StartedBinds } from "../../started-binds.js";
import type {
  BackendEvents,
  ClusterBackend,
  LogQuery,
  LogSink,
  PodStateChange,
  RequestOutcome,
} from "../types.js";
import { SimulatedLogs } from "./pod-logs.js";
import { SimulatedWorkloads } from "./workloads.js";
import type { RenderJob } from "../../../render/index.js";
import { expandNodes, loadClusterFile, type ClusterFile } from "./cluster-file.js";
import { podKey, SimulatedCluster, type RequestEffect } from "./simulated-cluster.js";
import {
  appendBind,
  appendCarriedOut,
  readCarriedOut,
  readClusterState,
  type StoredPod,
  writeClusterState,
} from "./state-file.js";

export interface SimulationClock {
  now(): number;
}

const REAL_CLOCK: SimulationClock = { now: () => Date.now() };
/** setTimeout's longest delay. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class SimulatedBackend implements ClusterBackend {
  readonly kind = "simulated";
  readonly defaultConcurrency = 512;
  private events: BackendEvents | null = null;
  private timer: NodeJS.Timeout | null = null;
  private armedFor: number | null = null;
  private readonly binds = new StartedBinds();
  /** Running pods by "job/pod", kept only when the cluster lives in a state file. */
  private readonly stored = new Map<string, StoredPod>();
  /** Ids of the bind requests that started a pod (kept in the state file's `.ran` log too). */
  private carriedOut = new Set<string>();
  private readonly logs: SimulatedLogs;
  private readonly workloads = new SimulatedWorkloads();

  constructor(
    readonly cluster: SimulatedCluster,
    /** Labels of the cluster (registerCluster). */
    readonly labels: Record<string, string> = {},
    private readonly clock: SimulationClock = REAL_CLOCK,
    /** Where the cluster's pods are kept across agent restarts (state-file.ts); null = memory only. */
    private readonly stateFile: string | null = null,
    /** A running pod writes a log line this often. */
    logIntervalSeconds = 60,
  ) {
    this.logs = new SimulatedLogs(clock, logIntervalSeconds * 1000);
  }

  static fromClusterFile(file: ClusterFile, clock?: SimulationClock, stateFile?: string): SimulatedBackend {
    return new SimulatedBackend(
      new SimulatedCluster(expandNodes(file), file.defaultPodDurationSeconds),
      file.labels,
      clock,
      stateFile ?? null,
      file.logIntervalSeconds,
    );
  }

  static async load(path: string, clock?: SimulationClock, stateFile?: string): Promise<SimulatedBackend> {
    return SimulatedBackend.fromClusterFile(await loadClusterFile(path), clock, stateFile);
  }

  async start(events: BackendEvents): Promise<void> {
    this.restore();
    this.events = events;
    events.nodes(this.cluster.listNodes(), true, []);
    // Like a real cluster, the pods it runs are complete: a cluster started empty has none.
    events.podInventory?.({
      pods: () => this.cluster.listPods(),
      bindsSince: (at) => this.binds.since(at),
    });
    this.tick();
  }

  async bind(request: BindRequestMessage, job: RenderJob | null = null): Promise<RequestOutcome> {
    if (job?.workload) this.workloads.bound(job);
    // A repeat of a bind whose pod ran and ended (its agent was killed before recording the
    // outcome) finds the finished pod, as on a real cluster: it does not start again.
    if (this.carriedOut.has(request.id) && this.cluster.podNode(request.job.id, request.pod.name) === null)
      return { ok: true, message: "carried out before; the pod has ended since" };
    this.binds.add({ jobId: request.job.id, pod: request.pod.name });
    const startedAt = this.clock.now();
    const effect = this.cluster.bind(request, startedAt);
    const started = effect.changes.length > 0;
    if (started) {
      this.carriedOut.add(request.id);
      this.logs.started(request.job.id, request.pod.name, request.job.restarts, request.node, startedAt);
    }
    if (started && this.stateFile) {
      const pod = { request, startedAt };
      this.stored.set(podKey(request.job.id, request.pod.name), pod);
      appendBind(this.stateFile, pod);
    }
    if (!started && effect.outcome.ok) this.adopt(request);
    const outcome = this.apply(effect);
    // After the pod is in the state file: a restart between the two finds it running.
    if (started && this.stateFile) appendCarriedOut(this.stateFile, request.id);
    return outcome;
  }

  async evict(request: BindRequestMessage): Promise<RequestOutcome> {
    return this.apply(this.cluster.evict(request));
  }

  /** The workload's object goes, and its pods with it (they leave their nodes unfinished). */
  async deleteWorkload(request: BindRequestMessage): Promise<RequestOutcome> {
    const existed = this.workloads.delete(request.job.id);
    this.apply({
      outcome: { ok: true, message: "" },
      changes: this.cluster.endJob(request.job.id, "its workload was deleted"),
    });
    return { ok: true, message: existed ? "deleted" : "already gone" };
  }

  /** Cordons or uncordons a virtual node and reports the change. */
  setUnschedulable(node: string, unschedulable: boolean): void {
    const inventory = this.cluster.setUnschedulable(node, unschedulable);
    this.events?.nodes([inventory], false, []);
  }

  readLogs(query: LogQuery, sink: LogSink, signal: AbortSignal): Promise<string> {
    return this.logs.read(query, sink, signal);
  }

  /** Ends the pods whose time is up and re-arms the timer for the next one. */
  tick(): void {
    const changes = this.cluster.advance(this.clock.now());
    this.persist(changes);
    this.endRuns(changes);
    if (changes.length > 0) this.events?.podStates(changes);
    this.logs.wake();
    this.arm();
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.armedFor = null;
    this.events = null;
  }

  private apply(effect: RequestEffect): RequestOutcome {
    this.persist(effect.changes);
    this.endRuns(effect.changes);
    if (effect.changes.length > 0) this.events?.podStates(effect.changes);
    this.arm();
    return effect.outcome;
  }

  /** A newer bind of a pod already running there: the run is this bind's now, in the state file
   * too, so that after a restart an eviction decided before it still finds the run newer. */
  private adopt(request: BindRequestMessage): void {
    const key = podKey(request.job.id, request.pod.name);
    const stored = this.stored.get(key);
    if (!this.stateFile || !stored || stored.request.id >= request.id) return;
    this.stored.set(key, { request, startedAt: stored.startedAt });
    writeClusterState(this.stateFile, this.stored.values());
  }

  /** The runs the changes end, as their logs say it; what that does to their workloads (an end,
   * a pod made again), added to the changes. */
  private endRuns(changes: PodStateChange[]): void {
    const now = this.clock.now();
    const ended = [];
    for (const c of [...changes]) {
      if (c.state === "SUCCEEDED" || c.state === "FAILED") {
        const { end, again } = this.workloads.podEnded(c.jobId, c.pod, c.state);
        if (end) ended.push(end);
        if (again) changes.push(again);
      }
      if (c.state === "RUNNING") continue;
      const end =
        c.exitCode !== undefined
          ? `exited with code ${c.exitCode}`
          : `stopped: ${c.message ?? "the pod left its node"}`;
      this.logs.ended(c.jobId, c.pod, now, end);
    }
    if (ended.length) this.events?.workloadStatus?.(ended);
  }

  /** Pods of the state file run again, each for what is left of its time. */
  private restore(): void {
    if (!this.stateFile) return;
    this.carriedOut = readCarriedOut(this.stateFile);
    for (const pod of readClusterState(this.stateFile).pods) {
      if (this.cluster.bind(pod.request, pod.startedAt).changes.length > 0) {
        this.stored.set(podKey(pod.request.job.id, pod.request.pod.name), pod);
        const { job, pod: p, node } = pod.request;
        this.logs.started(job.id, p.name, job.restarts ?? 0, node, pod.startedAt);
      }
    }
  }

  /** Written before the change is reported: what the agent reports, the file already holds. */
  private persist(changes: PodStateChange[]): void {
    if (!this.stateFile || changes.length === 0) return;
    for (const c of changes) if (c.state !== "RUNNING") this.stored.delete(podKey(c.jobId, c.pod));
    writeClusterState(this.stateFile, this.stored.values());
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
