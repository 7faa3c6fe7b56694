// Which jobs admission refuses because their queue's policy no longer allows them: a queue
// tightened after a submit (namespaces, pod security level, allow-lists) holds for its pending
// jobs too. Pure: the decision's operation reads the rows and the policies and writes the outcome.
import type { Job } from "../types.js";
import type { QueuePolicy } from "./queue-policy.js";
import { type StoredTaskForPolicy, storedJobPolicyError } from "../validation/job-policy.js";

/** A job about to be admitted, with the task rows its pods are made from. */
export interface AdmittedJobRows extends Pick<Job, "id" | "name" | "namespace" | "queueName"> {
  tasks: readonly StoredTaskForPolicy[];
}

export interface AdmissionRefusal {
  job: string;
  /** What the job's event and its pods say: the queue, the field and the rule. */
  message: string;
}

/** The field an error names, at the head of its message (once). */
function withField(e: Error): string {
  const field = (e as { field?: string }).field;
  return field && !e.message.startsWith(`${field}: `) ? `${field}: ${e.message}` : e.message;
}

/** The jobs among `jobs` their queue's current policy refuses, each with why. A job whose queue
 * has no policy here is not refused (the caller reads the policy of every job's queue). */
export function admissionRefusals(
  jobs: readonly AdmittedJobRows[],
  policies: ReadonlyMap<string, QueuePolicy>,
): AdmissionRefusal[] {
  return jobs.flatMap((job) => {
    const policy = policies.get(job.queueName);
    const refused = policy && storedJobPolicyError(job, job.tasks, policy);
    if (!refused) return [];
    return [
      {
        job: job.id,
        message: `job ${job.name} refused at admission: queue ${job.queueName}'s policy no longer allows it: ${withField(refused)}`,
      },
    ];
  });
}
