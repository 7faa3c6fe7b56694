// Everything the agent tells the control plane goes through here, in one loop and in a
// fixed order per round (nodes, bind results, pod states, pod inventory, pod groups), batched, retried
// with backoff while the API is away. Bind results are acknowledged to their waiter only
// once the API has them: the agent completes a BullMQ job only then, so a crash before
// that re-delivers the request instead of losing its result.
import type { Logger } from "pino";
import type {
  ExternalPodGroup,
  NodeInventory,
  PodInventory,
  PodRef,
  PodStateChange,
  WorkloadStatusChange,
} from "./backends/types.js";
import { backoffDelay, sleep, type BackoffPolicy } from "./backoff.js";
import type { BindResultReport, ControlPlane, PodStatusReport } from "./control-plane.js";
import { ApiRejectedError, describe } from "./graphql-client.js";
import { InventoryState } from "./inventory-state.js";
import { inventoryPages } from "./pod-inventory-pages.js";
import { RecentSet } from "./recent-set.js";
import { ReportLane } from "./report-lane.js";

export interface ReporterOptions {
  /** How long to gather reports before sending a round. */
  batchWindowMs: number;
  maxBatch: number;
  /** Without a node report for this long, an empty one proves the agent alive. */
  heartbeatMs: number;
  backoff: BackoffPolicy;
}

export class Reporter {
  private readonly inventory = new InventoryState();
  private readonly delivered = new RecentSet(10_000);
  private readonly bindResults: ReportLane<BindResultReport>;
  private readonly podGroups: ReportLane<ExternalPodGroup>;
  private readonly podStates: ReportLane<PodStatusReport>;
  private readonly workloads: ReportLane<WorkloadStatusChange>;
  private readonly stopController = new AbortController();
  private wake: (() => void) | null = null;
  /** When the API last had a node report (complete, partial or empty): only those count as
   * the agent's heartbeat, so a busy agent still sends one every heartbeatMs. */
  private lastNodeReportAt = Date.now();
  private loop: Promise<void> | null = null;
  private idleWaiters: (() => void)[] = [];
  private podGroupsUnsupported = false;
  /** The cluster's pods after its last (re)list, until reported. */
  private podSet: PodInventory | null = null;
  private lastPodSet: PodInventory | null = null;
  private podInventoryUnsupported = false;

  constructor(
    private readonly controlPlane: ControlPlane,
    private readonly options: ReporterOptions,
    private readonly log: Logger,
  ) {
    const dropped = (kind: string) => (item: unknown, err: Error) =>
      this.log.error({ item, err: err.message }, `the API refused a ${kind}; dropped`);
    this.bindResults = new ReportLane<BindResultReport>(
      "bind results",
      (items) => controlPlane.reportBindResult(items),
      options.maxBatch,
      dropped("bind result"),
    );
    this.podGroups = new ReportLane<ExternalPodGroup>(
      "pod groups",
      (items) => this.sendPodGroups(items),
      options.maxBatch,
      dropped("pod group"),
    );
    this.podStates = new ReportLane<PodStatusReport>(
      "pod states",
      (items) => controlPlane.reportPodStatus(items),
      options.maxBatch,
      dropped("pod state"),
    );
    this.workloads = new ReportLane<WorkloadStatusChange>(
      "workload states",
      (items) => controlPlane.reportWorkloadStatus(items).then(() => {}),
      options.maxBatch,
      dropped("workload state"),
    );
  }

  start(): void {
    this.loop ??= this.run();
  }

  nodes(nodes: NodeInventory[], complete: boolean, deleted: string[]): void {
    this.inventory.apply(nodes, complete, deleted);
    this.poke();
  }

  podStateChanges(changes: PodStateChange[]): void {
    for (const change of changes) {
      const report: PodStatusReport = { job: change.jobId, pod: change.pod, state: change.state };
      if (change.message) report.message = change.message;
      if (change.bindRequest) report.bindRequest = change.bindRequest;
      if (change.exitCode !== undefined) report.exitCode = change.exitCode;
      if (change.recreated) report.recreated = true;
      this.podStates.push(report);
    }
    this.poke();
  }

  podInventory(inventory: PodInventory): void {
    this.podSet = inventory;
    this.lastPodSet = inventory;
    this.poke();
  }

  workloadStatus(changes: WorkloadStatusChange[]): void {
    for (const change of changes) this.workloads.push(change);
    this.poke();
  }

  externalPodGroups(groups: ExternalPodGroup[]): void {
    for (const group of groups) this.podGroups.push(group);
    this.poke();
  }

  /** Resolves when the API has the result; rejects with AgentStoppedError on stop. A result
   * this process already delivered (the request came again, e.g. re-delivered after a Redis
   * outage) is not sent twice. */
  bindResult(result: BindResultReport): Promise<void> {
    if (this.delivered.has(result.bindRequest)) return Promise.resolve();
    const acked = this.bindResults.pushAndWait(result, result.bindRequest).then(() => {
      this.delivered.add(result.bindRequest);
    });
    this.poke();
    return acked;
  }

  /** Resolves once nothing is waiting to be sent (or after timeoutMs); true = drained. */
  async drained(timeoutMs: number): Promise<boolean> {
    if (!this.hasPending()) return true;
    const idle = new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    const timeout = sleep(timeoutMs, this.stopController.signal).then(() => false);
    return Promise.race([idle.then(() => true), timeout]);
  }

  async stop(): Promise<void> {
    this.stopController.abort();
    this.poke();
    await this.loop;
    this.bindResults.abandon();
  }

  /** reportPodGroups is not in the contract's required core: an API without it is told once in
   * the log, and pods users create in the cluster are then not reported. */
  private async sendPodGroups(groups: ExternalPodGroup[]): Promise<void> {
    if (this.podGroupsUnsupported) return;
    try {
      await this.controlPlane.reportPodGroups(groups);
    } catch (err) {
      if (!(err instanceof ApiRejectedError && err.code === "GRAPHQL_VALIDATION_FAILED")) throw err;
      this.podGroupsUnsupported = true;
      this.log.warn(
        { err: err.message },
        "the API has no reportPodGroups; pods created in the cluster are not reported",
      );
    }
  }

  /** reportPodInventory is newer than some APIs: without it the agent just does not reconcile. */
  private async sendPodInventory(pods: PodRef[]): Promise<void> {
    if (this.podInventoryUnsupported) return;
    try {
      for (const page of inventoryPages(pods)) await this.controlPlane.reportPodInventory(page);
    } catch (err) {
      if (!(err instanceof ApiRejectedError && err.code === "GRAPHQL_VALIDATION_FAILED")) throw err;
      this.podInventoryUnsupported = true;
      this.log.warn({ err: err.message }, "the API has no reportPodInventory; pods are not reconciled");
    }
  }

  private hasPending(): boolean {
    return (
      this.inventory.pending ||
      this.podSet !== null ||
      this.bindResults.size + this.podGroups.size + this.podStates.size + this.workloads.size > 0
    );
  }

  private poke(): void {
    this.wake?.();
  }

  private async run(): Promise<void> {
    const signal = this.stopController.signal;
    let failures = 0;
    while (!signal.aborted) {
      if (!this.hasPending()) {
        for (const resolve of this.idleWaiters.splice(0)) resolve();
        const untilHeartbeat = Math.max(0, this.lastNodeReportAt + this.options.heartbeatMs - Date.now());
        // Sleep until the heartbeat is due, a report arrives, or the reporter stops.
        const wait = new AbortController();
        const onStop = () => wait.abort();
        signal.addEventListener("abort", onStop, { once: true });
        this.wake = onStop;
        await sleep(untilHeartbeat, wait.signal);
        signal.removeEventListener("abort", onStop);
        this.wake = null;
        if (signal.aborted) break;
      }
      await sleep(this.options.batchWindowMs, signal);
      try {
        await this.sendRound();
        failures = 0;
      } catch (err) {
        // Once the API hears from us again it gets the whole picture: nodes and pods.
        this.inventory.resend();
        this.podSet ??= this.lastPodSet;
        const delay = backoffDelay(failures++, this.options.backoff);
        this.log.warn({ err: describe(err), retryInMs: delay }, "reporting to the API failed; will retry");
        await sleep(delay, signal);
      }
    }
  }

  private async sendRound(): Promise<void> {
    const report = this.inventory.take();
    if (report) {
      try {
        await this.controlPlane.reportNodes(report.nodes, report.complete);
        this.lastNodeReportAt = Date.now();
      } catch (err) {
        this.inventory.failed(report);
        throw err;
      }
    }
    // Read before this round's results go out: a pod that ends or is deleted meanwhile is
    // still listed (its state report goes first); binds begun since are added when sent.
    const podSet = this.podSet;
    const readAt = performance.now();
    const pods = podSet?.pods() ?? [];
    await this.bindResults.flush();
    await this.podStates.flush();
    if (podSet) {
      await this.sendPodInventory([...pods, ...podSet.bindsSince(readAt)]);
      if (this.podSet === podSet) this.podSet = null;
    }
    await this.podGroups.flush();
    // After the pods: a workload's end follows its pods' last reports.
    await this.workloads.flush();
    if (!report && Date.now() - this.lastNodeReportAt >= this.options.heartbeatMs) {
      // Heartbeat: an empty partial node report changes nothing but says "alive". Other reports
      // do not say it (the control plane times a cluster's silence by its node reports), so it
      // goes out on time however busy the other lanes are.
      await this.controlPlane.reportNodes([], false);
      this.lastNodeReportAt = Date.now();
    }
  }
}
