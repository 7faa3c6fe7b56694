// What one scheduling cycle would do on a snapshot with some queues' quotas changed: which jobs
// would start, which pods would be evicted, and how each queue's fair share would move. Pure: the
// live snapshot comes from the store's loader and nothing is written anywhere.
import {
  type QueueShare,
  type QuotaVector,
  type SchedulerConfig,
  type Snapshot,
  advanceSnapshot,
  computeFairShare,
  createAction,
  openSession,
  sessionResult,
} from "../core/index.js";

export type QuotaKey = keyof QuotaVector;

/** A changed quota: `deserved` and/or `limit` of one resource of one queue (-1 = unlimited). */
export interface QuotaChange {
  queue: string;
  resource: QuotaKey;
  deserved?: number | null;
  limit?: number | null;
}

/** Bad input to a what-if run; `field` is the path of the offending input. */
export class WhatIfInputError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
  }
}

export interface WhatIfJob {
  job: string;
  name: string;
  queue: string;
  /** Pods placed (started) or pipelined (placed on room being freed). */
  pods: number;
  nodes: string[];
}

export interface WhatIfEviction {
  job: string;
  name: string;
  queue: string;
  pod: string;
  node: string;
  action: string;
  message: string;
}

export interface WhatIfQueue {
  queue: string;
  deservedBefore: QuotaVector;
  deservedAfter: QuotaVector;
  fairShareBefore: QuotaVector;
  fairShareAfter: QuotaVector;
  /** Held by the queue's pods now, and after the cycle's decisions took effect. */
  allocatedBefore: QuotaVector;
  allocatedAfter: QuotaVector;
}

export interface WhatIfReport {
  /** Jobs the cycle binds pods of. */
  starts: WhatIfJob[];
  /** Jobs whose pods the cycle pipelines: they start once the evictions finish. */
  pipelined: WhatIfJob[];
  evictions: WhatIfEviction[];
  queues: WhatIfQueue[];
}

/** The snapshot with the changes applied (a new snapshot; the given one is not changed). */
export function withQuotaChanges(snapshot: Snapshot, changes: readonly QuotaChange[]): Snapshot {
  const names = new Set(snapshot.queues.map((q) => q.name));
  changes.forEach((c, i) => {
    if (!names.has(c.queue)) throw new WhatIfInputError(`quotas[${i}].queue`, `unknown queue ${c.queue}`);
    if (c.deserved == null && c.limit == null)
      throw new WhatIfInputError(`quotas[${i}]`, "give deserved, limit or both");
    for (const k of ["deserved", "limit"] as const) {
      const v = c[k];
      if (v != null && (!Number.isFinite(v) || (v < 0 && v !== -1)))
        throw new WhatIfInputError(`quotas[${i}].${k}`, `${v} is neither an amount >= 0 nor -1 (unlimited)`);
    }
  });
  return {
    ...snapshot,
    queues: snapshot.queues.map((q) => {
      const mine = changes.filter((c) => c.queue === q.name);
      if (!mine.length) return q;
      const deserved = { ...q.deserved };
      const limit = { ...q.limit };
      for (const c of mine) {
        if (c.deserved != null) deserved[c.resource] = c.deserved;
        if (c.limit != null) limit[c.resource] = c.limit;
      }
      return { ...q, deserved, limit };
    }),
  };
}

const ZERO: QuotaVector = { gpu: 0, cpuMillis: 0, memory: 0 };

/** Only the proportion plugin (as configured) takes part in computing fair shares. */
const shareConfig = (config: SchedulerConfig): SchedulerConfig => ({
  ...config,
  tiers: config.tiers.map((t) => ({ plugins: t.plugins.filter((p) => p.name === "proportion") })),
});

/** One cycle of the configured actions on `snapshot` with `changes`; nothing leaves this function. */
export function whatIf(
  snapshot: Snapshot,
  config: SchedulerConfig,
  changes: readonly QuotaChange[],
): WhatIfReport {
  const changed = withQuotaChanges(snapshot, changes);
  const shares = shareConfig(config);
  const before = new Map(computeFairShare(snapshot, shares).map((s) => [s.queue, s]));
  const ssn = openSession(changed, config);
  for (const a of config.actions) createAction(a).execute(ssn);
  const result = sessionResult(ssn);
  const advanced = advanceSnapshot(changed, ssn, result, 0);
  ssn.close();
  const after = new Map(computeFairShare(changed, shares).map((s) => [s.queue, s]));
  const held = new Map(computeFairShare(advanced, shares).map((s) => [s.queue, s]));
  const jobs = new Map(snapshot.jobs.map((j) => [j.uid, j]));

  const grouped = (placements: readonly { job: string; node: string }[]): WhatIfJob[] => {
    const by = new Map<string, WhatIfJob>();
    for (const p of placements) {
      const j = jobs.get(p.job);
      let e = by.get(p.job);
      if (!e) {
        e = { job: p.job, name: j?.name ?? p.job, queue: j?.queue ?? "", pods: 0, nodes: [] };
        by.set(p.job, e);
      }
      e.pods++;
      if (!e.nodes.includes(p.node)) e.nodes.push(p.node);
    }
    for (const e of by.values()) e.nodes.sort();
    return [...by.values()];
  };
  const podNames = new Map(snapshot.jobs.flatMap((j) => j.pods.map((p) => [p.uid, p.name] as const)));
  const vec = (s: QueueShare | undefined, k: "deserved" | "fairShare" | "allocated"): QuotaVector =>
    s ? { ...s[k] } : { ...ZERO };
  return {
    starts: grouped(result.binds),
    pipelined: grouped(result.pipelines),
    evictions: result.evictions.map((e) => {
      const j = jobs.get(e.job);
      return {
        job: e.job,
        name: j?.name ?? e.job,
        queue: j?.queue ?? "",
        pod: podNames.get(e.pod) ?? e.pod,
        node: e.node,
        action: e.action,
        message: e.message,
      };
    }),
    queues: changed.queues.map((q) => ({
      queue: q.name,
      deservedBefore: vec(before.get(q.name), "deserved"),
      deservedAfter: vec(after.get(q.name), "deserved"),
      fairShareBefore: vec(before.get(q.name), "fairShare"),
      fairShareAfter: vec(after.get(q.name), "fairShare"),
      allocatedBefore: vec(before.get(q.name), "allocated"),
      allocatedAfter: vec(held.get(q.name), "allocated"),
    })),
  };
}
