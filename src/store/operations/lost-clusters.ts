// The workers' lost-cluster check. A READY cluster whose agent has been silent for
// `lostAfterMs` becomes LOST: no admissions and no placements there (domain/cluster-state).
// Jobs admission sent there that have no pod placed (all PENDING or nominated) go back to
// admission at once, unless their submitter named the cluster. Jobs with pods placed stay, as
// those pods may still run: the agent's complete report on return reconciles them; with
// `requeueAfterMs`, a cluster silent that long has their placed pods taken back (PENDING, off
// the node) and the jobs go back to admission — at the risk of a pod running twice should the
// cluster still run it.
import { prismaOf } from "../client.js";
import type { Tx } from "../db.js";
import { awaitingAdmission } from "../domain/pending-reason.js";
import { PLACED_POD_STATES } from "../domain/pod-states.js";
import type { RecordEvent } from "../events.js";
import { toJson } from "../json.js";
import { type Actor, type Store, transact } from "../store.js";
import { bumpGeneration, lockCluster } from "./cluster-fence.js";
import { refreshJobs } from "./job-refresh.js";
import { writePodChanges } from "./pod-changes.js";

export interface LostClusterOptions {
  now: Date;
  lostAfterMs: number;
  /** null or 0 = jobs with placed pods wait for the agent. */
  requeueAfterMs?: number | null;
}

export interface LostClusterReport {
  /** Clusters that became LOST in this check. */
  lost: string[];
  /** Every cluster LOST now. */
  lostNow: string[];
  /** Jobs sent back to admission (no pod placed). */
  readmitted: number;
  /** Jobs whose placed pods were taken back (requeueAfterMs). */
  requeued: number;
}

export async function markLostClusters(
  store: Store,
  actor: Actor,
  o: LostClusterOptions,
): Promise<LostClusterReport> {
  const report: LostClusterReport = { lost: [], lostNow: [], readmitted: 0, requeued: 0 };
  const silentSince = new Date(+o.now - o.lostAfterMs);
  const candidates = await prismaOf(store).cluster.findMany({
    where: {
      OR: [
        { state: "LOST" },
        { state: "READY", OR: [{ heartbeatAt: null }, { heartbeatAt: { lt: silentSince } }] },
      ],
    },
    select: { name: true },
    orderBy: { name: "asc" },
  });
  for (const { name } of candidates) {
    const r = await transact(store, actor, (tx, record) => checkCluster(tx, record, name, o));
    if (r.becameLost) report.lost.push(name);
    if (r.lost) report.lostNow.push(name);
    report.readmitted += r.readmitted;
    report.requeued += r.requeued;
  }
  return report;
}

async function checkCluster(
  tx: Tx,
  record: RecordEvent,
  cluster: string,
  o: LostClusterOptions,
): Promise<{ lost: boolean; becameLost: boolean; readmitted: number; requeued: number }> {
  const none = { lost: false, becameLost: false, readmitted: 0, requeued: 0 };
  if (!(await lockCluster(tx, cluster))) return none;
  const row = await tx.cluster.findUnique({
    where: { name: cluster },
    select: { state: true, heartbeatAt: true },
  });
  if (!row) return none;
  const silentMs = +o.now - +(row.heartbeatAt ?? 0);
  // Re-read under the lock: a report may have come in since the candidates were listed.
  const becameLost = row.state === "READY" && silentMs > o.lostAfterMs;
  if (row.state !== "LOST" && !becameLost) return none;
  if (becameLost) {
    await tx.cluster.update({ where: { name: cluster }, data: { state: "LOST" } });
    await bumpGeneration(tx, cluster);
    record({
      kind: "cluster.lost",
      cluster,
      message: `cluster ${cluster} LOST: no report from its agent for ${Math.round(silentMs / 1000)} s; no new work goes there`,
    });
  }
  const readmitted = await readmitUnplacedJobs(tx, record, cluster, o.now);
  const requeue = o.requeueAfterMs ? silentMs > o.requeueAfterMs : false;
  const requeued = requeue ? await requeuePlacedJobs(tx, record, cluster, o.now, silentMs) : 0;
  if (readmitted + requeued > 0 && !becameLost) await bumpGeneration(tx, cluster);
  return { lost: true, becameLost, readmitted, requeued };
}

/** Jobs admission chose the cluster for whose pods are all PENDING or nominated. */
async function readmitUnplacedJobs(tx: Tx, record: RecordEvent, cluster: string, now: Date): Promise<number> {
  const jobs = await tx.job.findMany({
    where: {
      clusterName: cluster,
      requestedCluster: null,
      state: { in: ["PENDING", "ADMITTED", "RUNNING"] },
      pods: { every: { state: { in: ["PENDING", "PIPELINED"] } } },
    },
    select: { id: true, name: true, queueName: true },
  });
  if (!jobs.length) return 0;
  const ids = jobs.map((j) => j.id);
  const nominated = await tx.pod.findMany({
    where: { jobId: { in: ids }, state: "PIPELINED" },
    select: { id: true },
  });
  await writePodChanges(
    tx,
    nominated.map((p) => ({
      id: p.id,
      state: "PENDING" as const,
      node: null,
      gpuGroups: [],
      gpuDevices: [],
      message: null,
    })),
    now,
  );
  await backToAdmission(
    tx,
    record,
    jobs,
    cluster,
    "job.readmitted",
    `cluster ${cluster} is LOST; back to admission`,
  );
  return jobs.length;
}

/** Jobs with pods placed on the cluster: those pods are taken back, the jobs re-admitted. */
async function requeuePlacedJobs(
  tx: Tx,
  record: RecordEvent,
  cluster: string,
  now: Date,
  silentMs: number,
): Promise<number> {
  const pods = await tx.pod.findMany({
    where: { job: { clusterName: cluster }, state: { in: [...PLACED_POD_STATES] } },
    select: { id: true, jobId: true },
  });
  if (!pods.length) return 0;
  const message = `requeued: cluster ${cluster} LOST for ${Math.round(silentMs / 1000)} s`;
  await writePodChanges(
    tx,
    pods.map((p) => ({
      id: p.id,
      state: "PENDING" as const,
      node: null,
      gpuGroups: [],
      gpuDevices: [],
      message,
    })),
    now,
  );
  const ids = [...new Set(pods.map((p) => p.jobId))];
  const jobs = await tx.job.findMany({
    where: { id: { in: ids } },
    select: { id: true, name: true, queueName: true, requestedCluster: true },
  });
  // A job its submitter pinned to the cluster waits there, unplaced, for the cluster to return.
  await backToAdmission(
    tx,
    record,
    jobs.filter((j) => !j.requestedCluster),
    cluster,
    "job.requeued",
    message,
  );
  await refreshJobs(tx, ids, now, record);
  return jobs.length;
}

async function backToAdmission(
  tx: Tx,
  record: RecordEvent,
  jobs: readonly { id: string; name: string; queueName: string }[],
  cluster: string,
  kind: string,
  why: string,
): Promise<void> {
  await tx.job.updateMany({
    where: { id: { in: jobs.map((j) => j.id) } },
    data: { clusterName: null, pendingReason: toJson(awaitingAdmission()) },
  });
  for (const job of jobs)
    record({ kind, job: job.id, queue: job.queueName, cluster, message: `job ${job.name}: ${why}` });
}
