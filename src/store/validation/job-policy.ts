// A job spec against its queue's policy: pods only in the queue's namespaces, templates within
// its pod-security level.
import type { QueuePolicy } from "../domain/queue-policy.js";
import { ForbiddenError } from "../errors.js";
import { invalidAt } from "./parse.js";
import { podSecurityViolation } from "./pod-security/index.js";
import type { JobSpec } from "./submit-job.js";

export function jobPolicyError(spec: JobSpec, policy: QueuePolicy): Error | null {
  if (!policy.namespaces.includes(spec.namespace)) {
    return new ForbiddenError(
      `namespace "${spec.namespace}" is not allowed for jobs of queue ${spec.queue} (allowed: ${policy.namespaces.join(", ")})`,
      "namespace",
    );
  }
  for (const [i, task] of spec.tasks.entries()) {
    const v = podSecurityViolation(task.template, policy.podSecurity);
    if (v) {
      return invalidAt(
        ["tasks", i, "template", ...v.path],
        `${v.message} (${v.control}; queue ${spec.queue} holds pods to the ${policy.podSecurity} pod security level)`,
      );
    }
  }
  return null;
}
