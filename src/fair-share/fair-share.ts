// The fair-share view: per queue and cluster, what the core's proportion plugin computes on the
// cluster's current snapshot (never a second implementation), plus a total row per queue. The
// store gives the snapshots and usage (fairShareInputs); the computation is here.
import {
  computeFairShare,
  defaultSchedulerConfig,
  type QuotaVector,
  type SchedulerConfig,
} from "../core/index.js";
import { type FairShareInput, fairShareInputs, type Store, type UsageWindow } from "../store/index.js";

export interface FairShareRow {
  queue: string;
  /** null = the total across clusters. */
  cluster: string | null;
  deserved: QuotaVector;
  fairShare: QuotaVector;
  allocated: QuotaVector;
  requested: QuotaVector;
  limit: QuotaVector;
  usage: QuotaVector | null;
}

/** Only the proportion plugin (as configured) takes part in computing fair shares. */
export function fairShareConfig(config: SchedulerConfig = defaultSchedulerConfig()): SchedulerConfig {
  return {
    ...config,
    tiers: config.tiers.map((t) => ({ plugins: t.plugins.filter((p) => p.name === "proportion") })),
  };
}

/** -1 (unlimited) anywhere makes the sum unlimited. */
function sumVectors(vs: readonly QuotaVector[]): QuotaVector {
  const sum = (k: keyof QuotaVector) => (vs.some((v) => v[k] === -1) ? -1 : vs.reduce((n, v) => n + v[k], 0));
  return { gpu: sum("gpu"), cpuMillis: sum("cpuMillis"), memory: sum("memory") };
}

/** One cluster's rows. */
function clusterFairShareRows(input: FairShareInput, config?: SchedulerConfig): FairShareRow[] {
  const { cluster, snapshot, usage } = input;
  return computeFairShare(snapshot, fairShareConfig(config)).map((s) => ({
    ...s,
    cluster,
    usage: usage.get(s.queue) ?? null,
  }));
}

/** A total row per queue over its clusters' rows. */
function totalRows(rows: readonly FairShareRow[]): FairShareRow[] {
  const totals: FairShareRow[] = [];
  const byQueue = new Map<string, FairShareRow[]>();
  for (const r of rows) {
    const list = byQueue.get(r.queue);
    if (list) list.push(r);
    else byQueue.set(r.queue, [r]);
  }
  for (const [queue, list] of byQueue) {
    const usages = list.map((r) => r.usage).filter((u): u is QuotaVector => u !== null);
    totals.push({
      queue,
      cluster: null,
      deserved: sumVectors(list.map((r) => r.deserved)),
      fairShare: sumVectors(list.map((r) => r.fairShare)),
      allocated: sumVectors(list.map((r) => r.allocated)),
      requested: sumVectors(list.map((r) => r.requested)),
      limit: sumVectors(list.map((r) => r.limit)),
      usage: usages.length ? sumVectors(usages) : null,
    });
  }
  return totals;
}

/** The fair-share view, per cluster (or of one cluster) and, across every cluster, in total per queue. */
export async function fairShare(
  store: Store,
  opts: {
    cluster?: string | null;
    config?: SchedulerConfig;
    now?: Date;
    /** Time-based fair share as the workers run it (their usage window); absent = plain fair share. */
    usageWindow?: UsageWindow | null;
  } = {},
): Promise<FairShareRow[]> {
  const rows: FairShareRow[] = [];
  // Each cluster's snapshot is dropped once its rows are computed.
  for await (const input of fairShareInputs(store, opts))
    rows.push(...clusterFairShareRows(input, opts.config));
  return opts.cluster ? rows : [...rows, ...totalRows(rows)];
}
