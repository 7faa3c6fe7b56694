// A pod group report starts a job (a group with no open job) or ends one (the group is gone),
// inside reportPodGroups' transaction; pod-group-update.ts follows an open job's group.
import { createHash } from "node:crypto";
import type { Tx } from "../db.js";
import { awaitingScheduler } from "../domain/pending-reason.js";
import { tasksOf } from "../domain/pod-shapes.js";
import type { RecordEvent } from "../events.js";
import { Prisma } from "../generated/prisma/client.js";
import type { PodState } from "../types.js";
import { uuidv7 } from "../ids.js";
import { toJson } from "../json.js";
import type { Actor } from "../store.js";
import type { PodGroupSpec } from "../validation/pod-group-report.js";
import { writePodChanges } from "./pod-changes.js";
import { type GroupJob, groupOf, podRow, taskRow } from "./pod-group-rows.js";

const TERMINAL: readonly PodState[] = ["SUCCEEDED", "FAILED"];

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
    message: `job ${g.name} made from the ${groupOf(cluster, g)}, queue ${g.queue}: ${pods.length} pod(s), gang minimum ${minMember}`,
  });
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
    message: `job ${job.name} ended: the ${groupOf(cluster, g)} was deleted`,
  });
}
