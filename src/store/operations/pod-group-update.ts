// A pod group report for a group whose job is open: the job's pods become exactly the reported
// ones (added, removed, created again, resized), and its queue, priority and gang minimum follow
// the group. Inside reportPodGroups' transaction.
import type { Tx } from "../db.js";
import { taskNameOf, tasksOf } from "../domain/pod-shapes.js";
import type { RecordEvent } from "../events.js";
import type { PodGroupSpec } from "../validation/pod-group-report.js";
import { refreshJobs } from "./job-refresh.js";
import { type GroupJob, groupOf, podRow, requests, taskRow } from "./pod-group-rows.js";

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
  const resized = reshaped.filter((p) => existing.get(p.name)!.taskName !== taskNameOf(p.shape)).length;
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
    resized ? `${resized} with new requests` : "",
    settingsChanged.length ? `${settingsChanged.join(", ")} changed` : "",
  ].filter(Boolean);
  record({
    kind: "job.pod-group",
    job: job.id,
    queue: g.queue,
    cluster,
    message: `job ${job.name}: the ${groupOf(cluster, g)} has ${g.pods.length} pod(s): ${parts.join("; ")}`,
  });
  await refreshJobs(tx, [job.id], now, record);
  return true;
}
