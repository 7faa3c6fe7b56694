// Effective quotas: per resource, a cluster's override row wins field by field over the default
// row (scope "*"); a field set nowhere takes the built-in default.
import type { QuotaVector } from "../../core/index.js";
import type { QueueQuota, QuotaResource } from "../types.js";

/** The scope of the default quota row, which applies to every cluster. */
export const DEFAULT_QUOTA_SCOPE = "*";

export const BUILTIN_QUOTA = { deserved: 0, limit: -1, overQuotaWeight: 1 } as const;

/** What a quota row decides (its time of change aside). */
export type QuotaRow = Omit<QueueQuota, "updatedAt">;

export interface EffectiveQuota {
  deserved: QuotaVector;
  limit: QuotaVector;
  overQuotaWeight: QuotaVector;
}

const VECTOR_KEY: Record<QuotaResource, keyof QuotaVector> = {
  GPU: "gpu",
  CPU: "cpuMillis",
  MEMORY: "memory",
};

const builtinVector = (v: number): QuotaVector => ({ gpu: v, cpuMillis: v, memory: v });

/** rows: the queue's quota rows of scope "*" and/or `cluster`. */
export function effectiveQuota(rows: readonly QuotaRow[], cluster: string): EffectiveQuota {
  const q: EffectiveQuota = {
    deserved: builtinVector(BUILTIN_QUOTA.deserved),
    limit: builtinVector(BUILTIN_QUOTA.limit),
    overQuotaWeight: builtinVector(BUILTIN_QUOTA.overQuotaWeight),
  };
  // Default rows first, then the override: later assignments win, null fields don't assign.
  const ordered = [
    ...rows.filter((r) => r.scope === DEFAULT_QUOTA_SCOPE),
    ...rows.filter((r) => r.scope === cluster),
  ];
  for (const r of ordered) {
    const key = VECTOR_KEY[r.resource];
    if (r.deserved !== null) q.deserved[key] = r.deserved;
    if (r.limit !== null) q.limit[key] = r.limit;
    if (r.overQuotaWeight !== null) q.overQuotaWeight[key] = r.overQuotaWeight;
  }
  return q;
}
