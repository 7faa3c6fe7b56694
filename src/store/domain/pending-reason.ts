// Why a job is pending, in the shape of the API's PendingReason: an overall message and, per
// cluster that was considered, what stood in the way and which resources were short.
import { isDeepStrictEqual } from "node:util";
import type { JobOutcome, QuotaVector } from "../../core/index.js";
import type { QuotaResource } from "../types.js";

export interface ResourceAmount {
  resource: QuotaResource;
  amount: number;
}

export interface ClusterShortfall {
  cluster: string;
  message: string;
  short: ResourceAmount[];
}

export interface PendingReason {
  message: string;
  clusters: ClusterShortfall[];
}

export const awaitingAdmission = (): PendingReason => ({
  message: "waiting for admission to a cluster",
  clusters: [],
});

export const awaitingScheduler = (cluster: string): PendingReason => ({
  message: `waiting for the scheduler on cluster ${cluster}`,
  clusters: [],
});

/** Non-zero entries of a shortfall vector (gpu in devices, cpu in millicores, memory in bytes). */
export function shortAmounts(v: QuotaVector | null): ResourceAmount[] {
  if (!v) return [];
  const out: ResourceAmount[] = [];
  if (v.gpu > 0) out.push({ resource: "GPU", amount: v.gpu });
  if (v.cpuMillis > 0) out.push({ resource: "CPU", amount: v.cpuMillis });
  if (v.memory > 0) out.push({ resource: "MEMORY", amount: v.memory });
  return out;
}

/** The reason a session left a job pending on `cluster`, from the core's outcome for it. */
export function pendingReasonFromOutcome(cluster: string, outcome: JobOutcome): PendingReason {
  const message = outcome.fitErrors.length
    ? outcome.fitErrors.join("; ")
    : "not placed in the last scheduling cycle";
  return {
    message: `${cluster}: ${message}`,
    clusters: [{ cluster, message, short: shortAmounts(outcome.shortfall) }],
  };
}

/** Deep equality regardless of key order (jsonb does not keep it). */
export const samePendingReason = (a: PendingReason | null, b: PendingReason | null): boolean =>
  isDeepStrictEqual(a, b);
