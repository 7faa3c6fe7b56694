// Human formatting of the API's quantities: cpu millicores → cores, memory bytes → Gi/Ti,
// gpu devices (fractions allowed), times → ages.
import type { Resources } from "../client/types.js";

const trim = (n: number, digits = 1) => {
  const s = n.toFixed(digits);
  return s.includes(".") ? s.replace(/\.?0+$/, "") : s;
};

/** -1 is "unlimited" in quotas and fair-share rows. */
export function formatGpu(v: number | null | undefined): string {
  if (v === null || v === undefined) return "-";
  if (v < 0) return "∞";
  return trim(v, 2);
}

export function formatCpu(millis: number | null | undefined): string {
  if (millis === null || millis === undefined) return "-";
  if (millis < 0) return "∞";
  return millis % 1000 === 0 || millis >= 10_000 ? trim(millis / 1000, 1) : `${millis}m`;
}

const UNITS = ["", "Ki", "Mi", "Gi", "Ti", "Pi"];

export function formatBytes(bytes: string | number | null | undefined): string {
  if (bytes === null || bytes === undefined) return "-";
  let v = Number(bytes);
  if (v < 0) return "∞";
  let u = 0;
  while (v >= 1024 && u < UNITS.length - 1) {
    v /= 1024;
    u++;
  }
  return `${trim(v, 1)}${UNITS[u]}`;
}

export type ResourceKey = "gpu" | "cpu" | "memory";

export function formatResource(r: Resources | null | undefined, key: ResourceKey): string {
  if (!r) return "-";
  if (key === "gpu") return formatGpu(r.gpu);
  if (key === "cpu") return formatCpu(r.cpu);
  return formatBytes(r.memory);
}

/** "3s", "4m", "2h10m", "5d". */
export function formatAge(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return "-";
  return formatSeconds(Math.max(0, Math.round((now - Date.parse(iso)) / 1000)));
}

export function formatSeconds(s: number): string {
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${s % 60 ? `${s % 60}s` : ""}`;
  if (s < 86_400)
    return `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60) ? `${Math.floor((s % 3600) / 60)}m` : ""}`;
  return `${Math.floor(s / 86_400)}d`;
}
