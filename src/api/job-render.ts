// A job's render input (src/render) from its stored rows: the one path from the database to what
// agents create, `renderJob` shows and Pod.environment reports.
import { extendedResourcesOf, restartPolicyOf } from "../store/index.js";
import type { Job, JobTask } from "../store/index.js";
import type { RenderJob } from "../render/index.js";

/** The job with its tasks (any order: they are put in the order of the submitted spec). */
export function renderJobOf(job: Job, tasks: readonly JobTask[]): RenderJob {
  return {
    id: job.id,
    name: job.name,
    namespace: job.namespace,
    queue: job.queueName,
    minMember: job.minMember,
    rendezvousPort: job.rendezvousPort,
    workload: (job.workload as RenderJob["workload"]) ?? null,
    tasks: [...tasks]
      .sort((a, b) => a.position - b.position || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((t) => ({
        name: t.name,
        replicas: t.replicas,
        resources: {
          cpuMillis: t.cpuMillis,
          memory: Number(t.memory),
          gpus: t.gpus,
          gpuFraction: t.gpuFraction,
          gpuMemory: t.gpuMemory,
          extendedResources: extendedResourcesOf(t.extendedResources),
        },
        template: t.template,
      })),
  };
}

/** The job's restart policy in the API's shape (its defaults applied). */
export const restartPolicyView = (job: Job) => restartPolicyOf(job.restartPolicy);
