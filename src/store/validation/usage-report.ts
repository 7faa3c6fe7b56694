// A usage report's arguments checked and turned into a plan: the range as instants, the periods,
// the groups, and which rollup table answers which part of the range (whole UTC days from
// usage_day, the hours around them from usage_hour).
import { z } from "zod";
import { DAY_MS, floorTo, HOUR_MS } from "../domain/chargeback.js";
import { invalidAt, parseInput } from "./parse.js";
import { kubernetesLabelKey } from "./names.js";

export const USAGE_GROUPS = ["QUEUE", "CLUSTER", "GPU_MODEL", "LABEL"] as const;
export const USAGE_STEPS = ["HOUR", "DAY", "MONTH"] as const;
export type UsageGroup = (typeof USAGE_GROUPS)[number];
export type UsageStep = (typeof USAGE_STEPS)[number];

/** The longest range a report may cover with each step (a bound on the rows it returns). */
export const MAX_REPORT_DAYS: Record<UsageStep | "NONE", number> = {
  HOUR: 31,
  DAY: 1000,
  MONTH: 3660,
  NONE: 3660,
};

export interface UsageReportInput {
  from: string;
  to: string;
  groupBy: readonly string[];
  labelKey?: string | null;
  step?: string | null;
}

export interface UsageReportPlan {
  from: Date;
  to: Date;
  groupBy: UsageGroup[];
  labelKey: string | null;
  step: UsageStep | null;
  /** [from, to) of each table's part of the range; null = that table is not read. */
  hours: { from: Date; to: Date }[];
  days: { from: Date; to: Date } | null;
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

/** A day (UTC midnight) or a date-time with its zone, on a whole UTC hour. */
function instant(value: string, field: string): Date {
  const ok = DATE_ONLY.test(value) || DATE_TIME.test(value);
  const t = ok ? Date.parse(DATE_ONLY.test(value) ? `${value}T00:00:00Z` : value) : Number.NaN;
  if (!Number.isFinite(t))
    throw invalidAt(
      [field],
      `"${value}" is not a date (2026-11-01) or a date-time with a zone (2026-11-01T06:00:00Z)`,
    );
  if (t % HOUR_MS !== 0)
    throw invalidAt([field], `"${value}" is not on a whole hour: usage is kept per hour`);
  return new Date(t);
}

const shape = z.object({
  groupBy: z.array(z.enum(USAGE_GROUPS)).refine((g) => new Set(g).size === g.length, "lists a group twice"),
  labelKey: kubernetesLabelKey.nullish(),
  step: z.enum(USAGE_STEPS).nullish(),
});

export function planUsageReport(input: UsageReportInput): UsageReportPlan {
  const p = parseInput(shape, { groupBy: input.groupBy, labelKey: input.labelKey, step: input.step });
  const from = instant(input.from, "from");
  const to = instant(input.to, "to");
  if (to <= from) throw invalidAt(["to"], `must be after from (${input.from})`);
  const byLabel = p.groupBy.includes("LABEL");
  if (byLabel && !p.labelKey) throw invalidAt(["labelKey"], "is required to group by LABEL");
  if (!byLabel && p.labelKey) throw invalidAt(["labelKey"], "is only used with LABEL in groupBy");
  const step = p.step ?? null;
  const maxDays = MAX_REPORT_DAYS[step ?? "NONE"];
  if (to.getTime() - from.getTime() > maxDays * DAY_MS)
    throw invalidAt(["to"], `a report with step ${step ?? "none"} covers at most ${maxDays} days`);
  return { from, to, groupBy: p.groupBy, labelKey: p.labelKey ?? null, step, ...sources(from, to, step) };
}

/** Whole days come from usage_day unless the report is hourly; the rest from usage_hour. */
function sources(from: Date, to: Date, step: UsageStep | null): Pick<UsageReportPlan, "hours" | "days"> {
  const firstDay = Math.ceil(from.getTime() / DAY_MS) * DAY_MS;
  const lastDay = floorTo(to.getTime(), DAY_MS);
  if (step === "HOUR" || firstDay >= lastDay) return { hours: [{ from, to }], days: null };
  const hours = [
    { from, to: new Date(firstDay) },
    { from: new Date(lastDay), to },
  ].filter((r) => r.from < r.to);
  return { hours, days: { from: new Date(firstDay), to: new Date(lastDay) } };
}
