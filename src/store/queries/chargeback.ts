// Chargeback reads: the usage report (aggregated in SQL from usage_day and usage_hour), the
// prices, and each job's own usage.
import { prismaOf } from "../client.js";
import { hoursOf, type ResourceHours } from "../domain/chargeback.js";
import { Prisma } from "../generated/prisma/client.js";
import { epochMs, SUM_COLUMNS, utc } from "../operations/chargeback.js";
import type { Store } from "../store.js";
import type { UsageGroup, UsageReportPlan } from "../validation/usage-report.js";

export interface UsageReportRow {
  queue: string | null;
  cluster: string | null;
  /** "" = no GPUs (CPU and memory of pods without GPUs). */
  gpuModel: string | null;
  /** The value of the report's label key; null when grouped by it and the jobs lack it. */
  label: string | null;
  periodStart: Date;
  periodEnd: Date;
  allocated: ResourceHours;
  used: ResourceHours;
  /** Allocated resource-hours × their prices; null when no price applies. */
  cost: number | null;
}

const GROUP_COLUMN: Record<Exclude<UsageGroup, "LABEL">, string> = {
  QUEUE: "queue_name",
  CLUSTER: "cluster_name",
  GPU_MODEL: "gpu_model",
};
const STEP_UNIT = { HOUR: "hour", DAY: "day", MONTH: "month" } as const;
const SUMS =
  "sum(alloc_gpu_seconds) AS ag, sum(alloc_cpu_milli_seconds) AS ac, sum(alloc_memory_byte_seconds) AS am, " +
  "sum(used_gpu_seconds) AS ug, sum(used_cpu_milli_seconds) AS uc, sum(used_memory_byte_seconds) AS um";
const SUM_LIST = SUM_COLUMNS.join(", ");
const COLUMNS = `cluster_name, queue_name, gpu_model, label_set_id, ${SUM_LIST}`;

interface Sums {
  ag: number;
  ac: number;
  am: number;
  ug: number;
  uc: number;
  um: number;
}

/** The rollup rows of the plan's range: whole days from usage_day, the other hours from usage_hour. */
function source(plan: UsageReportPlan, queues: readonly string[] | null): Prisma.Sql {
  const scope = queues ? Prisma.sql`AND queue_name = ANY(${[...queues]}::text[])` : Prisma.empty;
  const parts = plan.hours.map(
    (r) => Prisma.sql`SELECT hour AS t, ${Prisma.raw(COLUMNS)} FROM usage_hour
      WHERE hour >= ${utc(r.from)} AND hour < ${utc(r.to)} ${scope}`,
  );
  if (plan.days)
    parts.push(Prisma.sql`SELECT day AS t, ${Prisma.raw(COLUMNS)} FROM usage_day
      WHERE day >= ${utc(plan.days.from)} AND day < ${utc(plan.days.to)} ${scope}`);
  return Prisma.join(parts, " UNION ALL ");
}

/** The most specific price of a resource for a row's cluster and GPU model. */
const price = (resource: string, alias: string) =>
  Prisma.raw(`LEFT JOIN LATERAL (
    SELECT price FROM usage_price p WHERE p.resource = '${resource}'
      AND p.cluster_name IN (i.cluster_name, '*') AND p.gpu_model IN (i.gpu_model, '*')
    ORDER BY p.cluster_name = '*', p.gpu_model = '*' LIMIT 1) ${alias} ON true`);

/** The report: per period and group, allocated and used resource-hours and their cost. `queues`
 * restricts it to those queues (a MEMBER's subtrees); null = every queue. */
export async function usageReport(
  store: Store,
  plan: UsageReportPlan,
  queues: readonly string[] | null,
): Promise<UsageReportRow[]> {
  const keys = ["QUEUE", "CLUSTER", "GPU_MODEL", "LABEL"] as const;
  const keyOf = (g: UsageGroup) =>
    plan.groupBy.includes(g)
      ? g === "LABEL"
        ? Prisma.sql`(SELECT l.labels ->> ${plan.labelKey} FROM usage_label_set l WHERE l.id = label_set_id)`
        : Prisma.raw(GROUP_COLUMN[g])
      : Prisma.sql`NULL::text`;
  const period = plan.step
    ? Prisma.sql`date_trunc(${STEP_UNIT[plan.step]}, t)`
    : Prisma.sql`${utc(plan.from)}`;
  type Row = Sums & { period: number; cost: number | null } & Record<`k${0 | 1 | 2 | 3}`, string | null>;
  const rows = await prismaOf(store).$queryRaw<Row[]>`
    WITH i AS (
      SELECT ${period} AS period, ${Prisma.join(
        keys.map((g, n) => Prisma.sql`${keyOf(g)} AS ${Prisma.raw(`k${n}`)}`),
        ", ",
      )}, cluster_name, gpu_model, ${Prisma.raw(SUMS)}
      FROM (${source(plan, queues)}) src
      GROUP BY 1, 2, 3, 4, 5, cluster_name, gpu_model
    )
    SELECT ${epochMs("period")} AS period, k0, k1, k2, k3,
           sum(ag) AS ag, sum(ac) AS ac, sum(am) AS am, sum(ug) AS ug, sum(uc) AS uc, sum(um) AS um,
           sum(CASE WHEN pg.price IS NULL AND pc.price IS NULL AND pm.price IS NULL THEN NULL
                    ELSE coalesce(ag / 3600 * pg.price, 0) + coalesce(ac / 3600000 * pc.price, 0)
                         + coalesce(am / 3600 / 1073741824 * pm.price, 0) END) AS cost
    FROM i ${price("GPU", "pg")} ${price("CPU", "pc")} ${price("MEMORY", "pm")}
    GROUP BY 1, 2, 3, 4, 5
    ORDER BY 1, 2, 3, 4, 5`;
  return rows.map((r) => {
    const start = new Date(Math.max(r.period, plan.from.getTime()));
    return {
      queue: r.k0,
      cluster: r.k1,
      gpuModel: r.k2,
      label: r.k3,
      periodStart: start,
      periodEnd: periodEnd(start, plan),
      allocated: hoursOf(r.ag, r.ac, r.am),
      used: hoursOf(r.ug, r.uc, r.um),
      cost: r.cost,
    };
  });
}

/** The end of the period starting at `start`, within the report's range. */
function periodEnd(start: Date, plan: UsageReportPlan): Date {
  if (!plan.step) return plan.to;
  const d = new Date(start);
  if (plan.step === "HOUR") d.setUTCHours(d.getUTCHours() + 1, 0, 0, 0);
  else {
    if (plan.step === "MONTH") d.setUTCMonth(d.getUTCMonth() + 1, 1);
    d.setUTCHours(plan.step === "DAY" ? 24 : 0, 0, 0, 0);
  }
  return d < plan.to ? d : plan.to;
}

export interface UsagePrice {
  cluster: string | null;
  gpuModel: string | null;
  resource: "GPU" | "CPU" | "MEMORY";
  price: number;
}

export async function usagePrices(store: Store): Promise<UsagePrice[]> {
  const rows = await prismaOf(store).usagePrice.findMany({
    orderBy: [{ clusterName: "asc" }, { gpuModel: "asc" }, { resource: "asc" }],
  });
  return rows.map((r) => ({
    cluster: r.clusterName === "*" ? null : r.clusterName,
    gpuModel: r.gpuModel === "*" ? null : r.gpuModel,
    resource: r.resource,
    price: r.price,
  }));
}

export interface JobUsage {
  allocated: ResourceHours;
  used: ResourceHours;
}

/** Each job's usage on every cluster it ran on: rolled up, plus its samples not rolled up yet. */
export async function jobUsageOf(store: Store, jobIds: readonly string[]): Promise<Map<string, JobUsage>> {
  const rows = await prismaOf(store).$queryRaw<(Sums & { job_id: string })[]>`
    SELECT job_id::text, ${Prisma.raw(SUMS)} FROM (
      SELECT job_id, ${Prisma.raw(SUM_LIST)} FROM job_usage WHERE job_id = ANY(${[...jobIds]}::uuid[])
      UNION ALL
      SELECT s.job_id, ${Prisma.raw(SUM_COLUMNS.map((c) => `s.${c}`).join(", "))}
      FROM usage_sample s LEFT JOIN usage_mark m ON m.cluster_name = s.cluster_name
      WHERE s.job_id = ANY(${[...jobIds]}::uuid[]) AND (m.rolled_to IS NULL OR s.bucket_start >= m.rolled_to)
    ) u GROUP BY job_id`;
  return new Map(
    rows.map((r) => [r.job_id, { allocated: hoursOf(r.ag, r.ac, r.am), used: hoursOf(r.ug, r.uc, r.um) }]),
  );
}
