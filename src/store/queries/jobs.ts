// Reading jobs for the API: filtered, newest first, cursor-paginated on (createdAt, id).
import type { Prisma, PrismaClient } from "../db.js";
import type { Job, JobState } from "../types.js";
import { InvalidInputError } from "../errors.js";

export interface JobListFilter {
  /** Any of these queues (a subtree, resolved by the caller). */
  queues?: string[];
  state?: JobState;
  cluster?: string;
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
