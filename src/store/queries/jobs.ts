// Reading jobs for the API: filtered, newest first, cursor-paginated on (createdAt, id).
import type { PrismaClient } from "../db.js";
import { type Job, Prisma } from "../generated/prisma/client.js";
import type { JobState } from "../generated/prisma/enums.js";
import { InvalidInputError } from "../errors.js";
import { jobLabelMatches } from "../validation/names.js";
import { parseInput } from "../validation/parse.js";

export interface JobListFilter {
  /** Any of these queues (a subtree, resolved by the caller). */
  queues?: string[];
  state?: JobState;
  cluster?: string;
  /** Every match must hold: the job's label `key` is one of `values`. */
  labels?: { key: string; values: string[] }[];
}

export interface JobPage {
  jobs: Job[];
  cursors: string[];
  hasNextPage: boolean;
}

export const MAX_PAGE_SIZE = 500;

export function encodeJobCursor(job: { createdAt: Date; id: string }): string {
  return Buffer.from(`${job.createdAt.toISOString()}|${job.id}`).toString("base64url");
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function decodeJobCursor(cursor: string): { createdAt: Date; id: string } {
  const [at, id] = Buffer.from(cursor, "base64url").toString().split("|");
  const createdAt = new Date(at ?? "");
  if (!id || !UUID.test(id) || Number.isNaN(createdAt.getTime()))
    throw new InvalidInputError("after", "after: not a cursor of this list");
  return { createdAt, id };
}

export async function listJobs(
  prisma: PrismaClient,
  filter: JobListFilter,
  first: number,
  after?: string | null,
): Promise<JobPage> {
  if (!Number.isInteger(first) || first < 0 || first > MAX_PAGE_SIZE) {
    throw new InvalidInputError("first", `first: must be between 0 and ${MAX_PAGE_SIZE}`);
  }
  if (filter.labels?.length) {
    const labels = parseInput(jobLabelMatches, filter.labels, ["filter", "labels"]);
    return listJobsByLabels(prisma, { ...filter, labels }, first, after);
  }
  const where: Prisma.JobWhereInput = {
    ...(filter.queues ? { queueName: { in: filter.queues } } : {}),
    ...(filter.state ? { state: filter.state } : {}),
    ...(filter.cluster ? { clusterName: filter.cluster } : {}),
  };
  if (after) {
    const c = decodeJobCursor(after);
    where.OR = [{ createdAt: { lt: c.createdAt } }, { createdAt: c.createdAt, id: { lt: c.id } }];
  }
  const rows = await prisma.job.findMany({
    where,
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: first + 1,
  });
  const jobs = rows.slice(0, first);
  return { jobs, cursors: jobs.map(encodeJobCursor), hasNextPage: rows.length > first };
}

/**
 * The same page, filtered by labels too: each match is one containment test per value
 * (`labels @> '{"k":"v"}'`), which the GIN index on job.labels answers; the page's ids come
 * from one query, then its rows.
 */
async function listJobsByLabels(
  prisma: PrismaClient,
  filter: JobListFilter,
  first: number,
  after?: string | null,
): Promise<JobPage> {
  const conditions: Prisma.Sql[] = (filter.labels ?? []).map(
    (m) =>
      Prisma.sql`(${Prisma.join(
        m.values.map((v) => Prisma.sql`labels @> ${JSON.stringify({ [m.key]: v })}::jsonb`),
        " OR ",
      )})`,
  );
  if (filter.queues) conditions.push(Prisma.sql`queue_name = ANY(${filter.queues}::text[])`);
  if (filter.state) conditions.push(Prisma.sql`state = ${filter.state}::"JobState"`);
  if (filter.cluster) conditions.push(Prisma.sql`cluster_name = ${filter.cluster}`);
  if (after) {
    const c = decodeJobCursor(after);
    conditions.push(Prisma.sql`(created_at, id) < (${c.createdAt}, ${c.id}::uuid)`);
  }
  const ids = await prisma.$queryRaw<{ id: string }[]>`
    SELECT id::text AS id FROM job WHERE ${Prisma.join(conditions, " AND ")}
    ORDER BY created_at DESC, id DESC LIMIT ${first + 1}`;
  const page = ids.slice(0, first).map((r) => r.id);
  const rows = page.length ? await prisma.job.findMany({ where: { id: { in: page } } }) : [];
  const byId = new Map(rows.map((j) => [j.id, j]));
  const jobs = page.map((id) => byId.get(id)).filter((j): j is Job => j !== undefined);
  return { jobs, cursors: jobs.map(encodeJobCursor), hasNextPage: ids.length > first };
}
