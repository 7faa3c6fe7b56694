// A page of each job's pods, events and BindRequests, for many jobs in one pass: the nested
// lists of the API are capped per job, so a page of jobs never reads every row of its jobs.
import { prismaOf } from "../client.js";
import { groupBy, naturalCompare } from "../collections.js";
import { type StoreEvent, toStoreEvent } from "../events.js";
import type { BindRequestWithPod, Pod } from "../types.js";
import type { Store } from "../store.js";

/** A page of pods keeps the API's event loop in proportion to its length (docs/benchmarks.md,
 * `bench:api-query-weight`); larger jobs are read a page at a time (`after`). */
export const MAX_PODS_PAGE = 1_000;
export const MAX_EVENTS_PAGE = 1_000;
export const MAX_BIND_REQUESTS_PAGE = 1_000;

const byName = (a: Pod, b: Pod) => naturalCompare(a.name, b.name);

/** The first `first` pods of each job in name order ("w-2" before "w-10"); with `after`, those
 * that come after the job's pod of that name (none when the job has no such pod). */
export async function podsOfJobs(
  store: Store,
  jobIds: string[],
  first: number,
  after: string | null = null,
): Promise<Map<string, Pod[]>> {
  const ids = await prismaOf(store).$queryRaw<{ id: string }[]>`
    SELECT id FROM (
      SELECT p.id, row_number() OVER (PARTITION BY p.job_id ORDER BY p.task_name, length(p.name), p.name) AS n
      FROM pod p WHERE p.job_id = ANY(${jobIds}::uuid[])
        AND (${after}::text IS NULL OR (p.task_name, length(p.name), p.name) > (
          SELECT c.task_name, length(c.name), c.name FROM pod c WHERE c.job_id = p.job_id AND c.name = ${after}::text))
    ) p WHERE n <= ${first}`;
  const rows = await prismaOf(store).pod.findMany({ where: { id: { in: ids.map((r) => r.id) } } });
  rows.sort(byName);
  return groupBy(rows, (p) => p.jobId);
}

/** How many pods of each job are in each state (states without pods left out). */
export async function podStatesOfJobs(
  store: Store,
  jobIds: string[],
): Promise<Map<string, { state: string; count: number }[]>> {
  const rows = await prismaOf(store).$queryRaw<{ jobId: string; state: string; count: number }[]>`
    SELECT job_id::text AS "jobId", state::text AS state, count(*)::int AS count
    FROM pod WHERE job_id = ANY(${jobIds}::uuid[])
    GROUP BY job_id, state ORDER BY job_id, state`;
  const out = new Map<string, { state: string; count: number }[]>();
  for (const r of rows) {
    const list = out.get(r.jobId) ?? [];
    list.push({ state: r.state, count: r.count });
    out.set(r.jobId, list);
  }
  return out;
}

/** The first `first` events of each job, oldest first. */
export async function eventsOfJobs(
  store: Store,
  jobIds: string[],
  first: number,
): Promise<Map<string, StoreEvent[]>> {
  const ids = await prismaOf(store).$queryRaw<{ id: bigint }[]>`
    SELECT id FROM (
      SELECT id, row_number() OVER (PARTITION BY job_id ORDER BY id) AS n
      FROM event WHERE job_id = ANY(${jobIds}::uuid[])
    ) e WHERE n <= ${first}`;
  const rows = await prismaOf(store).event.findMany({
    where: { id: { in: ids.map((r) => r.id) } },
    orderBy: { id: "asc" },
  });
  return groupBy(rows.map(toStoreEvent), (e) => e.job!);
}

/** The first `first` BindRequests of each job, oldest first, with their pod's name. */
export async function bindRequestsOfJobs(
  store: Store,
  jobIds: string[],
  first: number,
): Promise<Map<string, BindRequestWithPod[]>> {
  const ids = await prismaOf(store).$queryRaw<{ id: string }[]>`
    SELECT id FROM (
      SELECT id, row_number() OVER (PARTITION BY job_id ORDER BY created_at, id) AS n
      FROM bind_request WHERE job_id = ANY(${jobIds}::uuid[])
    ) b WHERE n <= ${first}`;
  const rows = await prismaOf(store).bindRequest.findMany({
    where: { id: { in: ids.map((r) => r.id) } },
    include: { pod: { select: { name: true } } },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
  return groupBy(rows, (b) => b.jobId);
}

/** The pod of the job with this name, or null. */
export function jobPod(store: Store, jobId: string, name: string): Promise<Pod | null> {
  return prismaOf(store).pod.findUnique({ where: { jobId_name: { jobId, name } } });
}
