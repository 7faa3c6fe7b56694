// The three things a pod group report can do to its job, inside reportPodGroups' transaction:
// create it, bring its pods and settings in line with the group, or end it (group deleted).
// Tasks of such jobs have no template: the pods exist in the cluster, the agent binds them.
import { createHash } from "node:crypto";
import type { Tx } from "../db.js";
import { awaitingScheduler } from "../domain/pending-reason.js";
import { taskNameOf, tasksOf } from "../domain/pod-shapes.js";
import type { RecordEvent } from "../events.js";
import { Prisma } from "../generated/prisma/client.js";
import type { PodState } from "../generated/prisma/enums.js";
import { uuidv7 } from "../ids.js";
import { toJson } from "../json.js";
import type { Actor } from "../store.js";
import type { PodGroupSpec, PodShape, ReportedPod } from "../validation/pod-group-report.js";
import { refreshJobs } from "./job-refresh.js";
import { writePodChanges } from "./pod-changes.js";

export interface GroupJob {
  id: string;
  name: string;
  queueName: string;
  priority: number;
  preemptible: boolean;
  minMember: number;
  pods: {
    id: string;
    name: string;
    taskName: string;
    state: PodState;
    nodeName: string | null;
    clusterUid: string | null;
  }[];
  tasks: { name: string; replicas: number }[];
}

const TERMINAL: readonly PodState[] = ["SUCCEEDED", "FAILED"];

const requests = (s: PodShape) => ({
  cpuMillis: s.cpuMillis,
  memory: s.memory,
  gpus: s.gpus,
  gpuFraction: s.gpuFraction,
  gpuMemory: s.gpuMemory,
});

function taskRow(jobId: string, name: string, shape: PodShape, replicas: number) {
  return {
    jobId,
    name,
    replicas,
    ...requests(shape),
    nodeSelector: toJson(shape.nodeSelector),
    gpuModel: shape.gpuModel,
    template: Prisma.DbNull, // the pod exists in the cluster: nothing to create
  };
}

const podRow = (jobId: string, pod: ReportedPod, now: Date) => ({
  id: uuidv7(now.getTime()),
  jobId,
  taskName: taskNameOf(pod.shape),
  name: pod.name,
  clusterUid: pod.uid,
  ...requests(pod.shape),
  createdAt: now,
  updatedAt: now,
});

const where = (cluster: string, g: PodGroupSpec) => `pod group ${g.namespace}/${g.name} on ${cluster}`;

export async function createGroupJob(
  tx: Tx,
  cluster: string,
  g: PodGroupSpec,
  actor: Actor,
  now: Date,
  record: RecordEvent,
): Promise<void> {
  const id = uuidv7(now.getTime());
  const pods = g.pods;
  const minMember = g.minMember ?? pods.length;
  // Required by the job table (submit's idempotency check); nothing replays a reported group.
  const specHash = createHash("sha256")
    .update(JSON.stringify({ cluster, ...g }, (_k, v) => (typeof v === "bigint" ? v.toString() : v)))
    .digest("hex");
  await tx.job.create({
    data: {
      id,
      name: g.name,
      namespace: g.namespace,
      queueName: g.queue,
      requestedCluster: cluster,
      clusterName: cluster,
      priority: g.priority,
      preemptible: g.preemptible,
      minMember,
      pendingReason: toJson(awaitingScheduler(cluster)),
      specHash,
      submittedBy: actor.name,
      createdInCluster: true,
      createdAt: now,
      updatedAt: now,
    },
  });
  await tx.jobTask.createMany({
    data: [...tasksOf(pods)].map(([name, t]) => taskRow(id, name, t.shape, t.replicas)),
  });
  await tx.pod.createMany({ data: pods.map((p) => podRow(id, p, now)) });
  record({
    kind: "job.submitted",
    job: id,
    queue: g.queue,
    cluster,
    message: `job ${g.name} made from the ${where(cluster, g)}, queue ${g.queue}: ${pods.length} pod(s), gang minimum ${minMember}`,
  });
}

/** Returns false when the job already matches the group (a repeated report). */
export async function updateGroupJob(
  tx: Tx,
  cluster: string,
  job: GroupJob,
  g: PodGroupSpec,
  now: Date,
  record: RecordEvent,
): Promise<boolean> {
  const reported = new Map(g.pods.map((p) => [p.name, p]));
  const existing = new Map(job.pods.map((p) => [p.name, p]));
  const removed = job.pods.filter((p) => !reported.has(p.name));
  const added = g.pods.filter((p) => !existing.has(p.name));
  // Another uid under a known name: the pod was deleted and created again, a new pod to place.
  const recreated = g.pods.filter((p) => {
    const pod = existing.get(p.name);
    return pod?.clusterUid && p.uid && pod.clusterUid !== p.uid;
  });
  const again = new Set(recreated.map((p) => p.name));
  // The task name is the shape's fingerprint: another task means other requests or constraints
  // (same pod: resized in place). A uid first heard of is recorded.
  const reshaped = g.pods.filter((p) => {
    const pod = existing.get(p.name);
    return (
      pod &&
      !again.has(p.name) &&
      (pod.taskName !== taskNameOf(p.shape) || (p.uid !== null && pod.clusterUid === null))
    );
  });
  const settings = {
    queueName: g.queue,
    priority: g.priority,
    preemptible: g.preemptible,
    minMember: g.minMember ?? g.pods.length,
  };
  const settingsChanged = (Object.keys(settings) as (keyof typeof settings)[]).filter(
    (k) => settings[k] !== job[k],
  );
  if (!removed.length && !added.length && !recreated.length && !reshaped.length && !settingsChanged.length)
    return false;

  const wanted = tasksOf(g.pods);
  const have = new Map(job.tasks.map((t) => [t.name, t]));
  const newTasks = [...wanted].filter(([name]) => !have.has(name));
  if (newTasks.length)
    await tx.jobTask.createMany({
      data: newTasks.map(([name, t]) => taskRow(job.id, name, t.shape, t.replicas)),
    });
  for (const [name, t] of wanted) {
    if (have.has(name) && have.get(name)!.replicas !== t.replicas)
      await tx.jobTask.update({
        where: { jobId_name: { jobId: job.id, name } },
        data: { replicas: t.replicas },
      });
  }
  if (removed.length) await tx.pod.deleteMany({ where: { id: { in: removed.map((p) => p.id) } } });
  for (const p of reshaped) {
    await tx.pod.update({
      where: { id: existing.get(p.name)!.id },
      data: { taskName: taskNameOf(p.shape), ...requests(p.shape), clusterUid: p.uid, updatedAt: now },
    });
  }
  for (const p of recreated) {
    await tx.pod.update({
      where: { id: existing.get(p.name)!.id },
      data: {
        taskName: taskNameOf(p.shape),
        ...requests(p.shape),
        clusterUid: p.uid,
        state: "PENDING",
        nodeName: null,
        gpuGroups: [],
        gpuDevices: [],
        message: "created again in the cluster",
        startedAt: null,
        finishedAt: null,
        updatedAt: now,
      },
    });
  }
  if (added.length) await tx.pod.createMany({ data: added.map((p) => podRow(job.id, p, now)) });
  const unused = [...have.keys()].filter((name) => !wanted.has(name));
  if (unused.length) await tx.jobTask.deleteMany({ where: { jobId: job.id, name: { in: unused } } });
  if (settingsChanged.length)
    await tx.job.update({ where: { id: job.id }, data: { ...settings, updatedAt: now } });

  const parts = [
    added.length ? `${added.length} added` : "",
    removed.length ? `${removed.length} removed` : "",
    recreated.length ? `${recreated.length} created again` : "",
    reshaped.length ? `${reshaped.length} with new requests` : "",
    settingsChanged.length ? `${settingsChanged.join(", ")} changed` : "",
  ].filter(Boolean);
  record({
    kind: "job.pod-group",
    job: job.id,
    queue: g.queue,
    cluster,
    message: `job ${job.name}: the ${where(cluster, g)} has ${g.pods.length} pod(s): ${parts.join("; ")}`,
  });
  await refreshJobs(tx, [job.id], now, record);
  return true;
}

/** The group is gone from the cluster: pods that had not finished end FAILED, the job CANCELLED. */
export async function endGroupJob(
  tx: Tx,
  cluster: string,
  job: GroupJob,
  g: PodGroupSpec,
  now: Date,
  record: RecordEvent,
): Promise<void> {
  const message = "the pod group was deleted from the cluster";
  await writePodChanges(
    tx,
    job.pods
      .filter((p) => !TERMINAL.includes(p.state))
      .map((p) => ({ id: p.id, state: "FAILED" as const, node: p.nodeName, message })),
    now,
  );
  await tx.job.update({
    where: { id: job.id },
    data: { state: "CANCELLED", pendingReason: Prisma.DbNull, finishedAt: now, updatedAt: now },
  });
  record({
    kind: "job.cancelled",
    job: job.id,
    queue: job.queueName,
    cluster,
    message: `job ${job.name} ended: the ${where(cluster, g)} was deleted`,
  });
}
