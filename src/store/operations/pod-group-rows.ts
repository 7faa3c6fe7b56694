// Rows of jobs made from pod groups (reportPodGroups): a task per pod shape, without template
// (the pods exist in the cluster: the agent binds them), and pods that keep their cluster uid.
import { taskNameOf } from "../domain/pod-shapes.js";
import { Prisma } from "../generated/prisma/client.js";
import type { Job, JobTask, Pod } from "../types.js";
import { uuidv7 } from "../ids.js";
import { toJson } from "../json.js";
import type { PodGroupSpec, PodShape, ReportedPod } from "../validation/pod-group-report.js";

/** A group's open job as reportPodGroups reads it. */
export interface GroupJob
  extends Pick<Job, "id" | "name" | "queueName" | "priority" | "preemptible" | "minMember"> {
  pods: Pick<Pod, "id" | "name" | "taskName" | "state" | "nodeName" | "clusterUid">[];
  tasks: Pick<JobTask, "name" | "replicas">[];
}

export const requests = (s: PodShape) => ({
  cpuMillis: s.cpuMillis,
  memory: s.memory,
  gpus: s.gpus,
  gpuFraction: s.gpuFraction,
  gpuMemory: s.gpuMemory,
});

export function taskRow(jobId: string, name: string, shape: PodShape, replicas: number) {
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

export const podRow = (jobId: string, pod: ReportedPod, now: Date) => ({
  id: uuidv7(now.getTime()),
  jobId,
  taskName: taskNameOf(pod.shape),
  name: pod.name,
  clusterUid: pod.uid,
  ...requests(pod.shape),
  createdAt: now,
  updatedAt: now,
});

/** "pod group ns/name on cluster", for event messages. */
export const groupOf = (cluster: string, g: PodGroupSpec) =>
  `pod group ${g.namespace}/${g.name} on ${cluster}`;
