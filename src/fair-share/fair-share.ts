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

/** The rows of each cluster's input, then (with `totals`) a total row per queue. */
export function fairShareRows(
  inputs: readonly FairShareInput[],
  config: SchedulerConfig | undefined,
  totals: boolean,
): FairShareRow[] {
  const proportion = fairShareConfig(config);
  const rows: FairShareRow[] = [];
  for (const { cluster, snapshot, usage } of inputs) {
    for (const s of computeFairShare(snapshot, proportion)) {
      rows.push({ ...s, cluster, usage: usage.get(s.queue) ?? null });
    }
  }
  if (!totals) return rows;
  const byQueue = new Map<string, FairShareRow[]>();
  for (const r of rows) byQueue.set(r.queue, [...(byQueue.get(r.queue) ?? []), r]);
  for (const [queue, list] of byQueue) {
    const usages = list.map((r) => r.usage).filter((u): u is QuotaVector => u !== null);
    rows.push({
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
  return rows;
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
  const inputs = await fairShareInputs(store, opts);
  return fairShareRows(inputs, opts.config, !opts.cluster);
}
