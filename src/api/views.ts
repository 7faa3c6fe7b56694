// Database rows → the shapes of schema.graphql (units, labels, times).
import type { QuotaVector } from "../core/index.js";
import { type ClusterCondition, clusterCondition, type ResourceSum } from "../store/index.js";

export interface ResourcesView {
  cpu: number | null;
  memory: bigint | number | null;
  gpu: number | null;
  gpuMemory: number | null;
}

export const resourcesOf = (s: ResourceSum): ResourcesView => ({
  cpu: s.cpuMillis,
  memory: s.memory,
  gpu: s.gpu,
  gpuMemory: s.gpuMemory,
});

/** Quota-like vectors (-1 = unlimited) in API units. */
export const resourcesOfQuota = (v: QuotaVector): ResourcesView => ({
  cpu: Math.round(v.cpuMillis),
  memory: Math.round(v.memory),
  gpu: v.gpu,
  gpuMemory: null,
});

export const labelsOf = (record: unknown): { key: string; value: string }[] =>
  Object.entries((record ?? {}) as Record<string, string>)
    .map(([key, value]) => ({ key, value }))
    .sort((a, b) => a.key.localeCompare(b.key));

export const iso = (d: Date | null | undefined): string | null => (d ? d.toISOString() : null);

/** READY, LOST or NOT_READY: the definition admission and the cycles use (domain/cluster-state). */
export const clusterStateOf = (c: { state: Parameters<typeof clusterCondition>[0] }): ClusterCondition =>
  clusterCondition(c.state);

export const taintString = (t: { key: string; value?: string; effect: string }): string =>
  `${t.key}${t.value !== undefined ? `=${t.value}` : ""}:${t.effect}`;
