// Prometheus gauges read from the database at scrape time, so every API replica reports the
// same truth (take one replica's value, or max, never the sum): pending pods per queue, fair share
// vs allocated per queue and cluster (the core's proportion plugin via the fair-share view), the
// clusters' state, capacity and allocation, the outbox's backlog, jobs past their estimated start.
import { Gauge, type Registry } from "prom-client";
import type { SchedulerConfig } from "../core/index.js";
import { type FairShareRow, fairShare } from "../fair-share/fair-share.js";
import {
  allocationByCluster,
  capacityOfClusters,
  type ClusterSummary,
  clusterSummaries,
  dispatchBacklog,
  pendingPodsByQueue,
  type ResourceSum,
  startsPastEstimate,
  type Store,
} from "../store/index.js";

interface Sample {
  pendingPods: { queue: string; n: number }[];
  backlog: { cluster: string; state: string; n: number }[];
  shares: FairShareRow[];
  clusters: ClusterSummary[];
  capacity: Map<string, { capacity: ResourceSum }>;
  allocated: Map<string, ResourceSum>;
  overdue: { queue: string; jobs: number; seconds: number }[];
}

async function sample(store: Store, config: SchedulerConfig | undefined): Promise<Sample> {
  const [pendingPods, backlog, clusters, overdue] = await Promise.all([
    pendingPodsByQueue(store),
    dispatchBacklog(store),
    clusterSummaries(store),
    startsPastEstimate(store),
  ]);
  const names = clusters.map((c) => c.name);
  const [capacity, allocated] = await Promise.all([
    capacityOfClusters(store, names),
    allocationByCluster(store, names),
  ]);
  // Per cluster only: totals are a sum in PromQL.
  const shares = (await fairShare(store, { config })).filter((r) => r.cluster !== null);
  return { pendingPods, backlog, shares, clusters, capacity, allocated, overdue };
}

const clusterState = (c: ClusterSummary) => (c.lost ? "LOST" : c.ready ? "READY" : "NOT_READY");

/** A cluster's resources as the gauges label them: GPU devices, CPU cores, memory bytes. */
const SUM_RESOURCES = [
  { label: "gpu", of: (v: ResourceSum) => v.gpu },
  { label: "cpu", of: (v: ResourceSum) => v.cpuMillis / 1000 },
  { label: "memory", of: (v: ResourceSum) => Number(v.memory) },
] as const;

const RESOURCES = [
  { label: "gpu", of: (v: { gpu: number }) => v.gpu },
  { label: "cpu", of: (v: { cpuMillis: number }) => (v.cpuMillis < 0 ? -1 : v.cpuMillis / 1000) },
  { label: "memory", of: (v: { memory: number }) => v.memory },
] as const;

type SetValue = (labels: Record<string, string>, value: number) => void;

interface SampledGauge {
  name: string;
  help: string;
  labelNames: readonly string[];
  /** Sets the gauge's values from a scrape's sample. */
  fill: (s: Sample, set: SetValue) => void;
}

/** One value per row of the sample: the row's labels and number. */
function perRow<R>(
  rows: (s: Sample) => readonly R[],
  labels: (r: R) => Record<string, string>,
  value: (r: R) => number,
): SampledGauge["fill"] {
  return (s, set) => {
    for (const r of rows(s)) set(labels(r), value(r));
  };
}

/** A gauge by queue: one value per queue's row. */
const queueGauge = <R extends { queue: string }>(
  name: string,
  help: string,
  rows: (s: Sample) => readonly R[],
  value: (r: R) => number,
): SampledGauge => ({
  name,
  help,
  labelNames: ["queue"],
  fill: perRow(rows, (r) => ({ queue: r.queue }), value),
});

const shareGauge = (
  name: string,
  help: string,
  key: "deserved" | "fairShare" | "allocated" | "requested",
): SampledGauge => ({
  name,
  help: `${help} per queue, cluster and resource (gpu devices, cpu cores, memory bytes; -1 = unlimited)`,
  labelNames: ["queue", "cluster", "resource"],
  fill: (s, set) => {
    for (const row of s.shares) {
      for (const r of RESOURCES)
        set({ queue: row.queue, cluster: row.cluster ?? "", resource: r.label }, r.of(row[key]));
    }
  },
});

const sumGauge = (
  name: string,
  help: string,
  of: (s: Sample, cluster: string) => ResourceSum | undefined,
): SampledGauge => ({
  name,
  help: `${help}, by cluster and resource (gpu devices, cpu cores, memory bytes)`,
  labelNames: ["cluster", "resource"],
  fill: (s, set) => {
    for (const c of s.clusters) {
      const sum = of(s, c.name);
      for (const r of SUM_RESOURCES) set({ cluster: c.name, resource: r.label }, sum ? r.of(sum) : 0);
    }
  },
});

const GAUGES: SampledGauge[] = [
  queueGauge(
    "fleetq_pending_pods",
    "Pods of unfinished jobs waiting for a placement, by queue",
    (s) => s.pendingPods,
    (r) => r.n,
  ),
  {
    name: "fleetq_outbox_backlog",
    help: "BindRequests not yet carried out, by cluster and state (PENDING: committed, not yet on the bind queue; DISPATCHED: on it, awaiting the agent's result)",
    labelNames: ["cluster", "state"],
    fill: perRow(
      (s) => s.backlog,
      (r) => ({ cluster: r.cluster, state: r.state }),
      (r) => r.n,
    ),
  },
  shareGauge("fleetq_queue_deserved", "Deserved quota", "deserved"),
  shareGauge("fleetq_queue_fair_share", "Fair share computed by the proportion plugin", "fairShare"),
  shareGauge("fleetq_queue_allocated", "Allocated (pods holding resources)", "allocated"),
  shareGauge("fleetq_queue_requested", "Requested (allocated plus pending)", "requested"),
  {
    name: "fleetq_cluster_state",
    help: "1 for each cluster's current state (READY, NOT_READY, LOST: its agent silent past clusterLostAfter), by cluster and state",
    labelNames: ["cluster", "state"],
    fill: perRow(
      (s) => s.clusters,
      (c) => ({ cluster: c.name, state: clusterState(c) }),
      () => 1,
    ),
  },
  sumGauge(
    "fleetq_cluster_capacity",
    "What the cluster's nodes offer in all",
    (s, c) => s.capacity.get(c)?.capacity,
  ),
  sumGauge("fleetq_cluster_allocated", "What pods hold on the cluster's nodes", (s, c) => s.allocated.get(c)),
  queueGauge(
    "fleetq_jobs_past_estimate",
    "Pending jobs still waiting past the first start the estimator gave them, by queue",
    (s) => s.overdue,
    (r) => r.jobs,
  ),
  queueGauge(
    "fleetq_job_start_overdue_seconds",
    "How long past the first start the estimator gave it the longest-waiting pending job of the queue is, by queue (absent: none past it)",
    (s) => s.overdue,
    (r) => r.seconds,
  ),
];

export function registerControlPlaneMetrics(
  registry: Registry,
  store: Store,
  config?: SchedulerConfig,
): void {
  // One database round per scrape, shared by the gauges (collect() runs for each of them), and
  // one at a time: scrapes arriving while a sample is read share it, however long it takes.
  let current: { at: number; value: Promise<Sample> } | null = null;
  const read = () => {
    if (!current || Date.now() - current.at > 1000) {
      const entry = { at: Number.POSITIVE_INFINITY, value: sample(store, config) };
      current = entry;
      const settled = () => {
        entry.at = Date.now();
      };
      entry.value.then(settled, settled);
    }
    return current.value;
  };
  for (const { fill, ...def } of GAUGES) {
    new Gauge({
      ...def,
      registers: [registry],
      async collect() {
        const s = await read();
        this.reset();
        fill(s, (labels, value) => this.set(labels, value));
      },
    });
  }
}
