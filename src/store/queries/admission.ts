// What the admission step decides about: PENDING jobs that no cluster has yet and, for
// re-admission, jobs that have waited long on the cluster admission gave them with none of their
// pods placed. Each comes as the core's PodGroupSpec (every pod Pending), ready to be added to a
// cluster's snapshot for a dry run.
import type { PodGroupSpec, TopologySpec } from "../../core/api/spec.js";
import type { PrismaClient } from "../db.js";
import type { PendingReason } from "../domain/pending-reason.js";
import type { Job, JobTask, Pod } from "../generated/prisma/client.js";
import { podGroupSpec, TopologyRegistry } from "../snapshot/map-rows.js";

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
}

/** Where a previous page of unadmitted jobs ended (the order is priority desc, created, id). */
export interface AdmissionCursor {
  priority: number;
  createdAt: Date;
  id: string;
}

export interface AdmissionQuery {
  /** At most this many of each kind (unadmitted, re-admission candidates). */
  limit: number;
  /** Unadmitted jobs after this one only (the next page). */
  after?: AdmissionCursor | null;
  /** Re-admission: jobs given their cluster longer ago than this; absent = none. */
  readmitAfterMs?: number;
  now: Date;
}

/** The cursor just after this candidate. */
export const cursorOf = (c: AdmissionCandidate): AdmissionCursor => ({
  priority: c.spec.priority,
  createdAt: new Date(c.spec.createdAt),
  id: c.spec.uid,
});

/** Highest priority first, then oldest (the order admission decides in). */
const ORDER = [{ priority: "desc" as const }, { createdAt: "asc" as const }, { id: "asc" as const }];

export async function admissionCandidates(
  prisma: PrismaClient,
  q: AdmissionQuery,
): Promise<AdmissionCandidate[]> {
  const a = q.after;
  const unadmitted = await prisma.job.findMany({
    where: {
      state: "PENDING",
      clusterName: null,
      ...(a
        ? {
            OR: [
              { priority: { lt: a.priority } },
              { priority: a.priority, createdAt: { gt: a.createdAt } },
              { priority: a.priority, createdAt: a.createdAt, id: { gt: a.id } },
            ],
          }
        : {}),
    },
    orderBy: ORDER,
    take: q.limit,
  });
  const waiting = q.readmitAfterMs === undefined ? [] : await longWaiting(prisma, q.readmitAfterMs, q);
  const jobs = [...unadmitted, ...waiting.map((w) => w.job)];
  if (!jobs.length) return [];
  const ids = jobs.map((j) => j.id);
  const tasks = await prisma.jobTask.findMany({ where: { jobId: { in: ids } } });
  const pods = await prisma.pod.findMany({ where: { jobId: { in: ids } } });
  const tasksByJob = new Map<string, Map<string, JobTask>>();
  for (const t of tasks) {
    const m = tasksByJob.get(t.jobId) ?? new Map<string, JobTask>();
    m.set(t.name, t);
    tasksByJob.set(t.jobId, m);
  }
  const podsByJob = new Map<string, Pod[]>();
  for (const p of pods) podsByJob.set(p.jobId, [...(podsByJob.get(p.jobId) ?? []), p]);
  const assignedAt = new Map(waiting.map((w) => [w.job.id, w.assignedAt]));
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
    };
  });
}

/** Admitted (not pinned) jobs with every pod still PENDING, given their cluster long ago. */
async function longWaiting(
  prisma: PrismaClient,
  afterMs: number,
  q: AdmissionQuery,
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
