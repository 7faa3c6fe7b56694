// Database rows → the shapes of schema.graphql (units, labels, times).
import type { QuotaVector } from "../core/api/spec.js";
import type { ResourceSum } from "../store/index.js";

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

/** A READY cluster whose agent has been silent this long is shown as LOST. */
export const HEARTBEAT_TIMEOUT_MS = 120_000;

export function clusterStateOf(c: { state: string; heartbeatAt: Date | null }, now = Date.now()): string {
  if (c.state === "READY" && (!c.heartbeatAt || now - c.heartbeatAt.getTime() > HEARTBEAT_TIMEOUT_MS))
    return "LOST";
  return c.state;
}

export const taintString = (t: { key: string; value?: string; effect: string }): string =>
  `${t.key}${t.value !== undefined ? `=${t.value}` : ""}:${t.effect}`;
