// Chargeback: sampling what each job's pods hold, rolling the samples up per hour and day, and the
// prices reports charge. Each cluster's usage_mark row, locked FOR UPDATE, orders these: samples
// start where the previous ended (several workers sampling one cluster cover each second once),
// and a rollup writes only hours wholly sampled and not yet rolled up (a rerun writes nothing;
// rewriting an hour from the same samples replaces its rows).
import { prismaOf } from "../client.js";
import type { Tx } from "../db.js";
import {
  bucketSpans,
  DAY_MS,
  DEFAULT_USAGE_RETENTION_DAYS,
  floorTo,
  HOUR_MS,
  retentionCutoff,
  rollupRange,
  sampleStart,
} from "../domain/chargeback.js";
import { DEFAULT_USAGE_WINDOW } from "../domain/usage.js";
import { Prisma } from "../generated/prisma/client.js";
import { type Actor, type Store, transact } from "../store.js";
import { HOLDING_STATES_SQL } from "./pod-state-sql.js";
import { invalidAt, parseInput } from "../validation/parse.js";
import { z } from "zod";
import { clusterName } from "../validation/names.js";

/** A timestamp parameter (the tables keep UTC without a zone). */
export const utc = (d: Date) => Prisma.sql`(to_timestamp(${d.getTime()}::float8 / 1000) AT TIME ZONE 'UTC')`;
/** A timestamp column read back as epoch milliseconds. */
export const epochMs = (column: string) => Prisma.raw(`(extract(epoch FROM ${column}) * 1000)::float8`);

/** The resource-seconds every usage table keeps: allocated, then used. */
export const SUM_COLUMNS = [
  "alloc_gpu_seconds",
  "alloc_cpu_milli_seconds",
  "alloc_memory_byte_seconds",
  "used_gpu_seconds",
  "used_cpu_milli_seconds",
  "used_memory_byte_seconds",
] as const;
const sumColumns = Prisma.raw(SUM_COLUMNS.join(", "));
const summed = Prisma.raw(SUM_COLUMNS.map((c) => `sum(${c})`).join(", "));
const replaced = Prisma.raw(SUM_COLUMNS.map((c) => `${c} = excluded.${c}`).join(", "));
const added = (table: string) =>
  Prisma.raw(SUM_COLUMNS.map((c) => `${c} = ${table}.${c} + excluded.${c}`).join(", "));

async function lockMark(tx: Tx, cluster: string) {
  await tx.$executeRaw`INSERT INTO usage_mark (cluster_name) VALUES (${cluster}) ON CONFLICT DO NOTHING`;
  const [mark] = await tx.$queryRaw<{ sampled_to: number | null; rolled_to: number | null }[]>`
    SELECT ${epochMs("sampled_to")} AS sampled_to, ${epochMs("rolled_to")} AS rolled_to
    FROM usage_mark WHERE cluster_name = ${cluster} FOR UPDATE`;
  const date = (ms: number | null) => (ms === null ? null : new Date(ms));
  return { sampledTo: date(mark!.sampled_to), rolledTo: date(mark!.rolled_to) };
}

export interface UsageSampleInput {
  cluster: string;
  /** The end of the interval sampled. */
  at: Date;
  /** The sampling interval: what the cluster's first sample covers. */
  seconds: number;
  /** The longest interval one sample covers (the gap since the previous one, at most this);
   * default twice `seconds`. */
  maxSeconds?: number;
}

/** Samples what the cluster's pods hold now as held since the cluster's previous sample: per job
 * and GPU model, allocated (pods BINDING, RUNNING or RELEASING on a node) and used (RUNNING).
 * Returns the seconds sampled (0: another worker sampled up to `at` already). */
export async function recordUsageSamples(store: Store, r: UsageSampleInput): Promise<number> {
  return prismaOf(store).$transaction(async (tx) => {
    const mark = await lockMark(tx, r.cluster);
    const from = sampleStart(mark.sampledTo, r.at, r.seconds, r.maxSeconds ?? 2 * r.seconds);
    if (!from) return 0;
    const spans = bucketSpans(from, r.at).map((s) => ({ bucket: s.bucket.getTime(), seconds: s.seconds }));
    await tx.$executeRaw`
      INSERT INTO usage_sample AS u (cluster_name, bucket_start, job_id, gpu_model, queue_name, labels, ${sumColumns})
      SELECT ${r.cluster}, to_timestamp(s.bucket / 1000) AT TIME ZONE 'UTC', h.job_id, h.gpu_model, h.queue_name, h.labels,
             h.gpu * s.seconds, h.cpu * s.seconds, h.mem * s.seconds,
             h.used_gpu * s.seconds, h.used_cpu * s.seconds, h.used_mem * s.seconds
      FROM (
        SELECT p.job_id, j.queue_name, j.labels,
               CASE WHEN p.gpus + p.gpu_fraction > 0 THEN coalesce(n.gpu_model, '') ELSE '' END AS gpu_model,
               sum(p.gpus + p.gpu_fraction) AS gpu, sum(p.cpu_millis)::float8 AS cpu, sum(p.memory)::float8 AS mem,
               coalesce(sum(p.gpus + p.gpu_fraction) FILTER (WHERE p.state = 'RUNNING'), 0) AS used_gpu,
               coalesce(sum(p.cpu_millis) FILTER (WHERE p.state = 'RUNNING'), 0)::float8 AS used_cpu,
               coalesce(sum(p.memory) FILTER (WHERE p.state = 'RUNNING'), 0)::float8 AS used_mem
        FROM pod p JOIN job j ON j.id = p.job_id
        LEFT JOIN node n ON n.cluster_name = j.cluster_name AND n.name = p.node_name
        WHERE j.cluster_name = ${r.cluster} AND p.state IN (${HOLDING_STATES_SQL})
          AND p.node_name IS NOT NULL
        GROUP BY 1, 2, 3, 4
      ) h CROSS JOIN jsonb_to_recordset(${JSON.stringify(spans)}::jsonb) AS s(bucket float8, seconds float8)
      ON CONFLICT (cluster_name, bucket_start, job_id, gpu_model) DO UPDATE SET ${added("u")}`;
    await tx.$executeRaw`UPDATE usage_mark SET sampled_to = ${utc(r.at)} WHERE cluster_name = ${r.cluster}`;
    return (r.at.getTime() - from.getTime()) / 1000;
  });
}

export interface RollupOptions {
  now?: Date;
  /** Rolled-up samples are kept this long (those of fair share's window: the same age). */
  rawWindowSeconds?: number;
  retentionDays?: number;
}

export interface RollupReport {
  /** The hours rolled up, [from, to); null = none was due. */
  from: Date | null;
  to: Date | null;
  prunedSamples: number;
}

/** Rolls the cluster's wholly sampled hours up (usage_hour, usage_day, job_usage), then drops
 * its samples rolled up and older than the raw window, and any rollups past the retention. */
export async function rollUpUsage(
  store: Store,
  cluster: string,
  o: RollupOptions = {},
): Promise<RollupReport> {
  const now = o.now ?? new Date();
  const rawWindow = o.rawWindowSeconds ?? DEFAULT_USAGE_WINDOW.windowSeconds;
  const cutoff = retentionCutoff(now, o.retentionDays ?? DEFAULT_USAGE_RETENTION_DAYS);
  return prismaOf(store).$transaction(
    async (tx) => {
      const mark = await lockMark(tx, cluster);
      const range = rollupRange(mark.rolledTo, mark.sampledTo, await firstSample(tx, cluster));
      if (range) await rollUpRange(tx, cluster, range);
      const rolledTo = range?.to ?? mark.rolledTo;
      const keepFrom = Math.min(rolledTo?.getTime() ?? 0, now.getTime() - rawWindow * 1000);
      const prunedSamples = await tx.$executeRaw`
        DELETE FROM usage_sample WHERE cluster_name = ${cluster} AND bucket_start < ${utc(new Date(keepFrom))}`;
      // Every cluster's, deleted ones' too: their rollups outlive them, not the retention.
      await tx.$executeRaw`DELETE FROM usage_hour WHERE hour < ${utc(cutoff)}`;
      await tx.$executeRaw`DELETE FROM usage_day WHERE day < ${utc(cutoff)}`;
      return { from: range?.from ?? null, to: range?.to ?? null, prunedSamples };
    },
    { timeout: 120_000, maxWait: 10_000 },
  );
}

/** A cluster going away: every hour it has samples of is rolled up, the last one though partly
 * sampled (no sample will come), then its samples and mark are dropped. Its rollups stay. */
export async function closeClusterUsage(tx: Tx, cluster: string): Promise<void> {
  const mark = await lockMark(tx, cluster);
  if (mark.sampledTo) {
    const end = new Date(Math.ceil(mark.sampledTo.getTime() / HOUR_MS) * HOUR_MS);
    const range = rollupRange(mark.rolledTo, end, await firstSample(tx, cluster));
    if (range) await rollUpRange(tx, cluster, range);
  }
  await tx.$executeRaw`DELETE FROM usage_sample WHERE cluster_name = ${cluster}`;
  await tx.$executeRaw`DELETE FROM usage_mark WHERE cluster_name = ${cluster}`;
}

async function firstSample(tx: Tx, cluster: string): Promise<Date | null> {
  const [first] = await tx.$queryRaw<{ t: number | null }[]>`
    SELECT ${epochMs("min(bucket_start)")} AS t FROM usage_sample WHERE cluster_name = ${cluster}`;
  return first?.t == null ? null : new Date(first.t);
}

async function rollUpRange(tx: Tx, cluster: string, r: { from: Date; to: Date }): Promise<void> {
  const inRange = Prisma.sql`s.cluster_name = ${cluster} AND s.bucket_start >= ${utc(r.from)} AND s.bucket_start < ${utc(r.to)}`;
  await tx.$executeRaw`
    INSERT INTO usage_label_set (labels) SELECT DISTINCT labels FROM usage_sample s WHERE ${inRange}
    ON CONFLICT (labels) DO NOTHING`;
  await tx.$executeRaw`
    DELETE FROM usage_hour WHERE cluster_name = ${cluster} AND hour >= ${utc(r.from)} AND hour < ${utc(r.to)}`;
  await tx.$executeRaw`
    INSERT INTO usage_hour (hour, cluster_name, queue_name, gpu_model, label_set_id, ${sumColumns})
    SELECT date_trunc('hour', s.bucket_start), ${cluster}, s.queue_name, s.gpu_model, l.id, ${summed}
    FROM usage_sample s JOIN usage_label_set l ON l.labels = s.labels WHERE ${inRange}
    GROUP BY 1, 2, 3, 4, 5`;
  // Jobs pruned meanwhile are skipped: their usage is in the hours above.
  await tx.$executeRaw`
    INSERT INTO job_usage AS u (job_id, cluster_name, ${sumColumns})
    SELECT s.job_id, ${cluster}, ${summed} FROM usage_sample s JOIN job j ON j.id = s.job_id
    WHERE ${inRange} GROUP BY s.job_id
    ON CONFLICT (job_id, cluster_name) DO UPDATE SET ${added("u")}`;
  await rewriteDays(tx, cluster, new Date(floorTo(r.from.getTime(), DAY_MS)), r.to);
  await tx.$executeRaw`UPDATE usage_mark SET rolled_to = ${utc(r.to)} WHERE cluster_name = ${cluster}`;
}

/** usage_day of the days [from, to) touches, summed again from usage_hour. */
async function rewriteDays(tx: Tx, cluster: string, from: Date, to: Date): Promise<void> {
  const end = new Date(Math.ceil(to.getTime() / DAY_MS) * DAY_MS);
  await tx.$executeRaw`
    DELETE FROM usage_day WHERE cluster_name = ${cluster} AND day >= ${utc(from)} AND day < ${utc(end)}`;
  await tx.$executeRaw`
    INSERT INTO usage_day (day, cluster_name, queue_name, gpu_model, label_set_id, ${sumColumns})
    SELECT date_trunc('day', hour), cluster_name, queue_name, gpu_model, label_set_id, ${summed}
    FROM usage_hour WHERE cluster_name = ${cluster} AND hour >= ${utc(from)} AND hour < ${utc(end)}
    GROUP BY 1, 2, 3, 4, 5
    ON CONFLICT (day, cluster_name, queue_name, gpu_model, label_set_id) DO UPDATE SET ${replaced}`;
}

const priceInput = z
  .object({
    cluster: clusterName.nullish(),
    gpuModel: z.string().min(1, "must not be empty").max(100, "must be at most 100 characters").nullish(),
    resource: z.enum(["GPU", "CPU", "MEMORY"]),
    price: z.number().finite().min(0, "must be 0 or more").nullable(),
  })
  .strict();
export type SetUsagePriceInput = z.input<typeof priceInput>;

/** A price per resource-hour for a cluster and GPU model (null = any); price null removes it. */
export async function setUsagePrice(store: Store, actor: Actor, input: SetUsagePriceInput): Promise<void> {
  const p = parseInput(priceInput, input);
  const key = { clusterName: p.cluster ?? "*", gpuModel: p.gpuModel ?? "*", resource: p.resource };
  await transact(store, actor, async (tx, record) => {
    if (p.cluster && !(await tx.cluster.findUnique({ where: { name: p.cluster }, select: { name: true } })))
      throw invalidAt(["cluster"], `cluster "${p.cluster}" does not exist`);
    if (p.price === null) await tx.usagePrice.deleteMany({ where: key });
    else
      await tx.usagePrice.upsert({
        where: { clusterName_gpuModel_resource: key },
        create: { ...key, price: p.price },
        update: { price: p.price },
      });
    record({
      kind: "price.set",
      cluster: p.cluster ?? null,
      message: `price of ${p.resource} on ${p.cluster ?? "any cluster"}, ${p.gpuModel ?? "any GPU model"}: ${p.price ?? "removed"}`,
    });
  });
}

export interface SeedRollupsInput {
  queues: readonly string[];
  clusters: readonly string[];
  from: Date;
  hours: number;
  gpuModel?: string;
}

/** Writes synthetic hourly rollups (and their days) in bulk, for benchmarks and tests: every
 * queue on every cluster, each hour from the day of `from`, a deterministic amount. */
export async function seedUsageRollups(store: Store, s: SeedRollupsInput): Promise<number> {
  const start = floorTo(s.from.getTime(), DAY_MS);
  return prismaOf(store).$transaction(
    async (tx) => {
      await tx.$executeRaw`INSERT INTO usage_label_set (labels) VALUES ('{}'::jsonb) ON CONFLICT (labels) DO NOTHING`;
      const end = new Date(start + s.hours * 3_600_000);
      await tx.$executeRaw`
        DELETE FROM usage_hour WHERE cluster_name = ANY(${[...s.clusters]}::text[])
          AND hour >= ${utc(new Date(start))} AND hour < ${utc(end)}`;
      // Hour first: rows arrive in the primary key's order.
      const n = await tx.$executeRaw`
        INSERT INTO usage_hour (hour, cluster_name, queue_name, gpu_model, label_set_id, ${sumColumns})
        SELECT ${utc(new Date(start))} + make_interval(hours => h), c, q, ${s.gpuModel ?? "H100"},
               (SELECT id FROM usage_label_set WHERE labels = '{}'::jsonb),
               3600 * (1 + (qi + ci + h) % 8), 3600 * 1000 * (4 + (qi + h) % 16), 3600 * 2^30 * (16 + (ci + h) % 64),
               3600 * ((qi + ci + h) % 8), 3600 * 1000 * (2 + (qi + h) % 16), 3600 * 2^30 * (8 + (ci + h) % 64)
        FROM generate_series(0, ${s.hours - 1}::int) AS h,
             unnest(${[...s.clusters]}::text[]) WITH ORDINALITY AS cs(c, ci),
             unnest(${[...s.queues]}::text[]) WITH ORDINALITY AS qs(q, qi)`;
      for (const c of s.clusters) await rewriteDays(tx, c, new Date(start), end);
      // A bulk load: the planner's statistics are taken now rather than whenever autovacuum runs.
      await tx.$executeRaw`ANALYZE usage_hour, usage_day`;
      return n;
    },
    { timeout: 3_600_000, maxWait: 10_000 },
  );
}
