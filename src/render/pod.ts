// A pod of a job as the agent creates it on Kubernetes, before it is bound: the task's template,
// named uniquely in its namespace (names.ts), handed to our scheduler name (so kube-scheduler
// leaves it alone until we bind it), labelled with the job and task it belongs to, reachable
// under its hostname within the job's Service, with the rendezvous environment in every container
// and its containers' cpu, memory and GPU requests and limits written from the task's declared
// resources. At bind time the agent adds the binding's annotations and the GPU devices
// (src/agent/backends/kubernetes/pod-manifest.ts).
import type { V1Pod } from "@kubernetes/client-node";
import {
  GPU_FRACTION_KEY,
  GPU_MEMORY_KEY,
  JOB_ID_KEY,
  JOB_NAME_KEY,
  POD_GROUP_KEY,
  POD_NAME_KEY,
  QUEUE_KEY,
  SCHEDULER_NAME,
  TASK_KEY,
} from "../protocol/labels.js";
import { declaredPodResources } from "../protocol/pod-resources.js";
import { containerEnvNames, hasService, rendezvousEnvironment, templatePodSpec } from "./environment.js";
import { jobServiceName, labelValue, podHostname, uniquePodName } from "./names.js";
import type { EnvVar, PodPlace, RenderJob } from "./types.js";

type Json = Record<string, unknown>;

/** The pod at `place` of the job's attempt after `restarts` restarts. Throws when the task's
 * template cannot make a pod (a bind then fails with the reason). */
export function renderPod(job: RenderJob, place: PodPlace, restarts: number): V1Pod {
  const template = place.task.template;
  const spec = {
    ...(templatePodSpec(template) ??
      fail("the job's task has no pod template (a Kubernetes cluster needs one)")),
  };
  if (!Array.isArray(spec.containers) || spec.containers.length === 0)
    fail("the job's pod template has no containers");
  const pod = `${place.task.name}-${place.index}`;
  const env = rendezvousEnvironment(job, place, restarts);
  const declared = place.task.resources;
  Object.assign(spec, declaredPodResources(spec, declared));
  delete spec.resources; // pod-level resources: the containers' declared figures make the pod's
  spec.schedulerName = SCHEDULER_NAME;
  spec.containers = withEnvironment(spec.containers as Json[], env);
  if (Array.isArray(spec.initContainers))
    spec.initContainers = withEnvironment(spec.initContainers as Json[], env);
  // No service-account token unless the template asks for one (its queue's policy allows it).
  spec.automountServiceAccountToken ??= false;
  spec.hostname = podHostname(pod);
  if (hasService(job)) spec.subdomain = jobServiceName(job.id, job.name);
  else delete spec.subdomain;
  delete spec.nodeName; // placement happens through the Binding, after creation
  const metadata = templateMetadata(template);
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: uniquePodName(job.id, job.name, pod, restarts),
      namespace: job.namespace,
      labels: {
        ...((metadata.labels as Record<string, string> | undefined) ?? {}),
        [JOB_ID_KEY]: labelValue(job.id),
        [POD_GROUP_KEY]: labelValue(job.name),
        [TASK_KEY]: labelValue(place.task.name),
      },
      annotations: {
        ...((metadata.annotations as Record<string, string> | undefined) ?? {}),
        [JOB_ID_KEY]: job.id,
        [POD_NAME_KEY]: pod,
        [JOB_NAME_KEY]: job.name,
        [QUEUE_KEY]: job.queue,
        [POD_GROUP_KEY]: job.name,
        ...(declared.gpuFraction > 0 ? { [GPU_FRACTION_KEY]: String(declared.gpuFraction) } : {}),
        ...(declared.gpuMemory > 0 ? { [GPU_MEMORY_KEY]: String(declared.gpuMemory) } : {}),
      },
    },
    spec: spec as unknown as V1Pod["spec"],
  };
}

/** Each container with the rendezvous variables first (so its own may refer to them as $(NAME)),
 * except those it sets itself, which keep its value. */
function withEnvironment(containers: Json[], env: readonly EnvVar[]): Json[] {
  return containers.map((c) => {
    const own = new Set(containerEnvNames(c));
    return { ...c, env: [...env.filter((e) => !own.has(e.name)), ...(Array.isArray(c.env) ? c.env : [])] };
  });
}

/** A Pod template's own metadata (a bare PodSpec has none). */
function templateMetadata(template: unknown): Json {
  const t = template as Json;
  return "spec" in t && t.metadata !== null && typeof t.metadata === "object" ? (t.metadata as Json) : {};
}

function fail(message: string): never {
  throw new Error(message);
}
