// Usage reports as a short table (the groups asked for, allocated hours, used GPU-hours, cost) or
// as CSV with every field at full precision.
import type { UsageRow } from "../client/types.js";
import { type Column, renderTable } from "./table.js";

const KEYS: { group: string; header: string; value: (r: UsageRow) => string | null }[] = [
  { group: "QUEUE", header: "QUEUE", value: (r) => r.queue },
  { group: "CLUSTER", header: "CLUSTER", value: (r) => r.cluster },
  { group: "GPU_MODEL", header: "GPU MODEL", value: (r) => (r.gpuModel === "" ? "(none)" : r.gpuModel) },
  { group: "LABEL", header: "LABEL", value: (r) => r.label ?? "(unset)" },
];

const fixed = (digits: number) => (n: number) => n.toFixed(digits);
const hours = fixed(1);

export function usageTable(rows: readonly UsageRow[], groupBy: readonly string[], byPeriod: boolean): string {
  const columns: Column<UsageRow>[] = [
    ...(byPeriod
      ? [{ header: "PERIOD", value: (r: UsageRow) => r.periodStart.replace(":00:00.000Z", "Z") }]
      : []),
    ...KEYS.filter((k) => groupBy.includes(k.group)).map((k) => ({
      header: k.header,
      value: (r: UsageRow) => k.value(r) ?? "",
    })),
    { header: "GPU-H", value: (r) => hours(r.allocated.gpuHours), align: "right" },
    { header: "USED GPU-H", value: (r) => hours(r.used.gpuHours), align: "right" },
    { header: "CPU-CORE-H", value: (r) => hours(r.allocated.cpuCoreHours), align: "right" },
    { header: "MEM-GIB-H", value: (r) => hours(r.allocated.memoryGiBHours), align: "right" },
    { header: "COST", value: (r) => (r.cost === null ? "-" : fixed(2)(r.cost)), align: "right" },
  ];
  return renderTable(columns, rows);
}

const CSV_HEADER = [
  "period_start",
  "period_end",
  "queue",
  "cluster",
  "gpu_model",
  "label",
  "gpu_hours",
  "cpu_core_hours",
  "memory_gib_hours",
  "used_gpu_hours",
  "used_cpu_core_hours",
  "used_memory_gib_hours",
  "cost",
];

const csvField = (v: string | number | null): string => {
  const s = v === null ? "" : String(v);
  return /[",\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
};

export function usageCsv(rows: readonly UsageRow[]): string {
  const line = (r: UsageRow) =>
    [
      r.periodStart,
      r.periodEnd,
      r.queue,
      r.cluster,
      r.gpuModel,
      r.label,
      r.allocated.gpuHours,
      r.allocated.cpuCoreHours,
      r.allocated.memoryGiBHours,
      r.used.gpuHours,
      r.used.cpuCoreHours,
      r.used.memoryGiBHours,
      r.cost,
    ]
      .map(csvField)
      .join(",");
  return [CSV_HEADER.join(","), ...rows.map(line)].join("\n");
}
