// A job's tasks against its queue's policy: pods only in the queue's namespaces, templates within
// its pod-security level and its allow-lists, none of fleetq's own marks; and, once the cluster is
// known, what that cluster lets pods ask for beyond cpu, memory and nvidia.com/gpu. Pure: the same
// answer at submit, at admission (from the stored rows) and in tests.
import type { QueuePolicy } from "../domain/queue-policy.js";
import { ForbiddenError } from "../errors.js";
import { invalidAt } from "./parse.js";
import type { ClusterPodPolicy } from "./pod-policy.js";
import { podFieldsViolation } from "./pod-fields.js";
import { podSecurityViolation } from "./pod-security/index.js";
import { QUEUE_NAMESPACE } from "./submit-job.js";
import { clusterResourceViolation, extendedResourcesOf } from "./extended-resources.js";

/** What the checks read of a task: its template and its declared resources per pod. */
export interface PolicyTask {
  template: unknown;
  cpuMillis: number;
  memory: bigint | number;
  gpus: number;
  /** {name: count} per pod of extended resources beyond nvidia.com/gpu. */
  extendedResources: Readonly<Record<string, number>>;
}

export interface PolicyJob {
  queue: string;
  namespace: string;
  tasks: readonly PolicyTask[];
}

/**
 * The first thing of the job its queue's policy refuses (ForbiddenError for the namespace,
 * InvalidInputError naming the field otherwise), or null. `cluster`: the pod policy of the
 * cluster the job goes to; undefined while none is chosen (its rules then wait for admission).
 */
export function jobPolicyError(
  job: PolicyJob,
  policy: QueuePolicy,
  cluster?: ClusterPodPolicy,
): Error | null {
  if (!policy.namespaces.includes(job.namespace)) {
    return new ForbiddenError(
      `namespace "${job.namespace}" is not allowed for jobs of queue ${job.queue} (allowed: ${policy.namespaces.join(", ")})`,
      "namespace",
    );
  }
  for (const [i, task] of job.tasks.entries()) {
    const refused = taskPolicyError(job.queue, task, policy, cluster);
    if (refused) return invalidAt(["tasks", i, ...refused.path], refused.message);
  }
  return null;
}

/** The spec with the queue's first namespace where its input named none. */
export function withQueueNamespace<T extends { namespace: string }>(spec: T, policy: QueuePolicy): T {
  return spec.namespace === QUEUE_NAMESPACE && policy.namespaces.length
    ? { ...spec, namespace: policy.namespaces[0]! }
    : spec;
}

/** What the policy check reads of a stored JobTask. */
export interface StoredTaskForPolicy {
  template: unknown;
  cpuMillis: number;
  memory: bigint;
  gpus: number;
  extendedResources: unknown;
}

/** The same check from stored rows (a Job and its JobTasks), as admission reads them. */
export function storedJobPolicyError(
  job: { queueName: string; namespace: string },
  tasks: readonly StoredTaskForPolicy[],
  policy: QueuePolicy,
  cluster?: ClusterPodPolicy,
): Error | null {
  return jobPolicyError(
    {
      queue: job.queueName,
      namespace: job.namespace,
      tasks: tasks.map((t) => ({ ...t, extendedResources: extendedResourcesOf(t.extendedResources) })),
    },
    policy,
    cluster,
  );
}

function taskPolicyError(
  queue: string,
  task: PolicyTask,
  policy: QueuePolicy,
  cluster: ClusterPodPolicy | undefined,
): { path: PropertyKey[]; message: string } | null {
  const security = podSecurityViolation(task.template, policy.podSecurity);
  if (security)
    return {
      path: ["template", ...security.path],
      message: `${security.message} (${security.control}; queue ${queue} holds pods to the ${policy.podSecurity} pod security level)`,
    };
  const field = podFieldsViolation(task.template, policy.pod);
  if (field) return { path: ["template", ...field.path], message: `${field.message} (queue ${queue})` };
  if (!cluster) return null;
  return clusterResourceViolation(task, cluster);
}
