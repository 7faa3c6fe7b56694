// Prometheus gauges read from the database at scrape time, so every API replica reports the
// same truth: pending pods per queue, fair share vs allocated per queue and cluster (the core's
// proportion plugin via the fair-share view), recent bind latency, dispatch backlog.
import { Gauge, type Registry } from "prom-client";
import type { SchedulerConfig } from "../core/index.js";
import { type FairShareRow, fairShare } from "../fair-share/fair-share.js";
import { bindLatency, dispatchBacklog, pendingPodsByQueue, type Store } from "../store/index.js";

interface Sample {
  pendingPods: { queue: string; n: number }[];
  backlog: { cluster: string; state: string; n: number }[];
  latency: { cluster: string; p50: number; p90: number; p99: number; n: number }[];
  shares: FairShareRow[];
}

/** How far back bind latency looks. */
export const BIND_LATENCY_WINDOW_SECONDS = 300;

async function sample(store: Store, config: SchedulerConfig | undefined): Promise<Sample> {
  const [pendingPods, backlog, latency] = await Promise.all([
    pendingPodsByQueue(store),
    dispatchBacklog(store),
    bindLatency(store, BIND_LATENCY_WINDOW_SECONDS),
  ]);
  // Per cluster only: totals are a sum in PromQL.
  const shares = (await fairShare(store, { config })).filter((r) => r.cluster !== null);
  return { pendingPods, backlog, latency, shares };
}

const RESOURCES = [
  { label: "gpu", of: (v: { gpu: number }) => v.gpu },
  { label: "cpu", of: (v: { cpuMillis: number }) => (v.cpuMillis < 0 ? -1 : v.cpuMillis / 1000) },
  { label: "memory", of: (v: { memory: number }) => v.memory },
] as const;

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

  new Gauge({
    name: "fleetq_pending_pods",
    help: "Pods of unfinished jobs waiting for a placement, by queue",
    labelNames: ["queue"] as const,
    registers: [registry],
    async collect() {
      const s = await read();
      this.reset();
      for (const r of s.pendingPods) this.set({ queue: r.queue }, r.n);
    },
  });
  new Gauge({
    name: "fleetq_dispatch_backlog",
    help: "BindRequests not yet carried out, by cluster and state (PENDING: not yet on the bind queue; DISPATCHED: awaiting the agent's result)",
    labelNames: ["cluster", "state"] as const,
    registers: [registry],
    async collect() {
      const s = await read();
      this.reset();
      for (const r of s.backlog) this.set({ cluster: r.cluster, state: r.state }, r.n);
    },
  });
  new Gauge({
    name: "fleetq_bind_latency_seconds",
    help: `Time from a bind decision to the agent's success, quantiles over the last ${BIND_LATENCY_WINDOW_SECONDS}s, by cluster`,
    labelNames: ["cluster", "quantile"] as const,
    registers: [registry],
    async collect() {
      const s = await read();
      this.reset();
      for (const r of s.latency) {
        this.set({ cluster: r.cluster, quantile: "0.5" }, r.p50);
        this.set({ cluster: r.cluster, quantile: "0.9" }, r.p90);
        this.set({ cluster: r.cluster, quantile: "0.99" }, r.p99);
      }
    },
  });
  const shareGauge = (
    name: string,
    help: string,
    key: "deserved" | "fairShare" | "allocated" | "requested",
  ) =>
    new Gauge({
      name,
      help: `${help} per queue, cluster and resource (gpu devices, cpu cores, memory bytes; -1 = unlimited)`,
      labelNames: ["queue", "cluster", "resource"] as const,
      registers: [registry],
      async collect() {
        const s = await read();
        this.reset();
        for (const row of s.shares) {
          for (const r of RESOURCES) {
            this.set({ queue: row.queue, cluster: row.cluster ?? "", resource: r.label }, r.of(row[key]));
          }
        }
      },
    });
  shareGauge("fleetq_queue_deserved", "Deserved quota", "deserved");
  shareGauge("fleetq_queue_fair_share", "Fair share computed by the proportion plugin", "fairShare");
  shareGauge("fleetq_queue_allocated", "Allocated (pods holding resources)", "allocated");
  shareGauge("fleetq_queue_requested", "Requested (allocated plus pending)", "requested");
}
