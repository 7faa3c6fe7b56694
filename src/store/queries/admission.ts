// What the admission step reads: PENDING jobs that no cluster has yet and, for re-admission, jobs
// that have waited long on the cluster admission gave them with none of their pods placed. Each
// comes as the core's PodGroupSpec (every pod Pending), ready to be added to a cluster's snapshot
// for a dry run.
import { prismaOf } from "../client.js";
import { type PodNeeds, podNeedsOf } from "../validation/extended-resources.js";
import type { PodGroupSpec, TopologySpec } from "../../core/index.js";
import { groupBy } from "../collections.js";
import type { PrismaClient } from "../db.js";
import type { PendingReason } from "../domain/pending-reason.js";
import type { Job, JobTask, Pod } from "../types.js";
import { podGroupSpec, TopologyRegistry } from "../snapshot/map-rows.js";
import type { Store } from "../store.js";

export interface LabelMatch {
  key: string;
  values: string[];
}

export interface AdmissionCandidate {
  spec: PodGroupSpec;
  /** The topologies the spec's constraints name (to add to a snapshot with the job). */
  topologies: TopologySpec[];
  clusterSelector: LabelMatch[];
  /** The cluster it waits on (a re-admission candidate); null = not admitted yet. */
  cluster: string | null;
  /** When it was given `cluster` (null when not admitted). */
  assignedAt: Date | null;
  pendingReason: PendingReason | null;
  /** What its pods need of a cluster's pod policy. */
  podNeeds: PodNeeds;
}

/** An unadmitted job in admission's order, with its number of pods (to cut chunks by). */
export interface UnadmittedJob {
  id: string;
  pods: number;
}

/** Every PENDING job without a cluster, highest priority first, then oldest (one small row each). */
export async function unadmittedJobs(store: Store): Promise<UnadmittedJob[]> {
  const rows = await prismaOf(store).$queryRaw<{ id: string; pods: number }[]>`
    SELECT j.id::text AS id, (SELECT count(*) FROM pod p WHERE p.job_id = j.id)::int AS pods
    FROM job j WHERE j.state = 'PENDING' AND j.cluster_name IS NULL
    ORDER BY j.priority DESC, j.created_at ASC, j.id ASC`;
  return rows;
}

/** Jobs admission gave a cluster (not pinned) that have waited unplaced longer than `afterMs`. */
export async function readmissionCandidates(
  store: Store,
  q: { afterMs: number; now: Date; limit: number },
): Promise<AdmissionCandidate[]> {
  const waiting = await longWaiting(prismaOf(store), q.afterMs, q);
  return candidates(
    prismaOf(store),
    waiting.map((w) => w.job),
    new Map(waiting.map((w) => [w.job.id, w.assignedAt])),
  );
}

/** These unadmitted jobs as candidates, in the order given (those no longer unadmitted left out). */
export async function admissionCandidatesByIds(
  store: Store,
  ids: readonly string[],
): Promise<AdmissionCandidate[]> {
  if (!ids.length) return [];
  // The three reads go out together: a job's tasks and pods read beside a job left out go unused.
  const [rows, tasks, pods] = await Promise.all([
    prismaOf(store).job.findMany({ where: { id: { in: [...ids] }, state: "PENDING", clusterName: null } }),
    prismaOf(store).jobTask.findMany({ where: { jobId: { in: [...ids] } } }),
    prismaOf(store).pod.findMany({ where: { jobId: { in: [...ids] } } }),
  ]);
  const byId = new Map(rows.map((j) => [j.id, j]));
  const jobs = ids.map((id) => byId.get(id)).filter((j): j is Job => j !== undefined);
  return candidatesOf(jobs, tasks, pods, new Map());
}

/** One job's rows as an admission candidate (a job not stored yet: a dry run's). */
export function candidateOfRows(
  job: Job,
  tasks: readonly JobTask[],
  pods: readonly Pod[],
): AdmissionCandidate {
  return candidatesOf([job], tasks, pods, new Map())[0]!;
}

/** Highest priority first, then oldest (the order admission decides in). */
const ORDER = [{ priority: "desc" as const }, { createdAt: "asc" as const }, { id: "asc" as const }];

async function candidates(
  prisma: PrismaClient,
  jobs: readonly Job[],
  assignedAt: ReadonlyMap<string, Date>,
): Promise<AdmissionCandidate[]> {
  if (!jobs.length) return [];
  const ids = jobs.map((j) => j.id);
  const [tasks, pods] = await Promise.all([
    prisma.jobTask.findMany({ where: { jobId: { in: ids } } }),
    prisma.pod.findMany({ where: { jobId: { in: ids } } }),
  ]);
  return candidatesOf(jobs, tasks, pods, assignedAt);
}

function candidatesOf(
  jobs: readonly Job[],
  tasks: readonly JobTask[],
  pods: readonly Pod[],
  assignedAt: ReadonlyMap<string, Date>,
): AdmissionCandidate[] {
  const tasksByJob = new Map<string, Map<string, JobTask>>();
  for (const t of tasks) {
    const m = tasksByJob.get(t.jobId) ?? new Map<string, JobTask>();
    m.set(t.name, t);
    tasksByJob.set(t.jobId, m);
  }
  const podsByJob = groupBy<Pod, string>(pods, (p) => p.jobId);
  return jobs.map((job) => {
    const registry = new TopologyRegistry();
    return {
      spec: podGroupSpec(
        job,
        tasksByJob.get(job.id) ?? new Map(),
        podsByJob.get(job.id) ?? [],
        false,
        registry,
      ),
      topologies: registry.topologies(),
      clusterSelector: job.clusterSelector as unknown as LabelMatch[],
      cluster: job.clusterName,
      assignedAt: assignedAt.get(job.id) ?? null,
      pendingReason: job.pendingReason as PendingReason | null,
      podNeeds: podNeedsOf([...(tasksByJob.get(job.id)?.values() ?? [])]),
    };
  });
}

/** Admitted (not pinned) jobs with every pod still PENDING, given their cluster long ago. */
async function longWaiting(
  prisma: PrismaClient,
  afterMs: number,
  q: { now: Date; limit: number },
): Promise<{ job: Job; assignedAt: Date }[]> {
  const before = new Date(q.now.getTime() - afterMs);
  const jobs = await prisma.job.findMany({
    where: {
      state: "PENDING",
      clusterName: { not: null },
      requestedCluster: null,
      createdAt: { lt: before }, // assigned after it was created: a cheap first cut
      pods: { every: { state: "PENDING" } },
    },
    orderBy: ORDER,
    take: q.limit,
  });
  if (!jobs.length) return [];
  const assigned = await prisma.$queryRaw<{ job_id: string; at: Date }[]>`
    SELECT DISTINCT ON (job_id) job_id::text AS job_id, at FROM event
    WHERE job_id = ANY(${jobs.map((j) => j.id)}::uuid[]) AND kind IN ('job.assigned', 'job.reassigned')
    ORDER BY job_id, id DESC`;
  const at = new Map(assigned.map((r) => [r.job_id, r.at]));
  return jobs.flatMap((job) => {
    const when = at.get(job.id);
    return when && when < before ? [{ job, assignedAt: when }] : [];
  });
}
