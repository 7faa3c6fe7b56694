// The headless Service of a job of more than one pod: it gives every pod the DNS name
// "<hostname>.<service>.<namespace>.svc" from the moment it exists (publishNotReadyAddresses: a
// gang's pods find rank 0 before any of them is ready). The agent makes the job's pods its owners
// as it creates them, so the garbage collector removes it once the last of them is gone.
import type { V1Service } from "@kubernetes/client-node";
import { JOB_ID_KEY, JOB_NAME_KEY, POD_GROUP_KEY, QUEUE_KEY } from "../protocol/labels.js";
import { hasService } from "./environment.js";
import { jobServiceName, labelValue } from "./names.js";
import type { RenderJob } from "./types.js";

/** The job's Service; null for a one-pod job (it needs none). */
export function renderService(job: RenderJob): V1Service | null {
  if (!hasService(job)) return null;
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name: jobServiceName(job.id, job.name),
      namespace: job.namespace,
      labels: { [JOB_ID_KEY]: labelValue(job.id), [POD_GROUP_KEY]: labelValue(job.name) },
      annotations: { [JOB_ID_KEY]: job.id, [JOB_NAME_KEY]: job.name, [QUEUE_KEY]: job.queue },
    },
    spec: {
      clusterIP: "None",
      selector: { [JOB_ID_KEY]: labelValue(job.id) },
      publishNotReadyAddresses: true,
    },
  };
}
