// The Pod the Kubernetes backend creates for a BindRequest: the job's template, named
// uniquely in its namespace (pod-names.ts), handed to our scheduler name (so kube-scheduler leaves
// it alone until we bind it), labelled with the job and pod group it belongs to, and pinned
// to the GPU devices the control plane chose (annotation + NVIDIA_VISIBLE_DEVICES), its
// containers' cpu, memory and GPU requests and limits written from the task's declared resources.
import type { V1Binding, V1Pod } from "@kubernetes/client-node";
import type { BindRequestMessage } from "../../../protocol/bind-request.js";
import {
  type DeclaredResources,
  declaredContainerResources,
  declaredInitContainerResources,
} from "../../../protocol/pod-resources.js";
import {
  BIND_GENERATION_KEY,
  BIND_REQUEST_KEY,
  GPU_DEVICES_KEY,
  GPU_FRACTION_KEY,
  GPU_GROUPS_KEY,
  GPU_MEMORY_KEY,
  JOB_ID_KEY,
  JOB_NAME_KEY,
  POD_GROUP_KEY,
  POD_NAME_KEY,
  QUEUE_KEY,
  SCHEDULER_NAME,
} from "../../labels.js";
import { pinContainers } from "./gpu-pinning.js";
import { clusterPodName } from "./pod-names.js";

type Json = Record<string, unknown>;

/** Throws when the job's template cannot make a pod (the bind then fails with the reason). */
export function podManifest(request: BindRequestMessage, namespace: string, template: unknown): V1Pod {
  if (template === null || typeof template !== "object" || Array.isArray(template)) {
    throw new Error("the job's task has no pod template (a Kubernetes cluster needs one)");
  }
  // The template is a Pod (with spec) or just a PodSpec.
  const source = ("spec" in template ? template : { spec: template }) as Json;
  const spec = { ...((source.spec as Json | undefined) ?? {}) };
  if (!Array.isArray(spec.containers) || spec.containers.length === 0) {
    throw new Error("the job's pod template has no containers");
  }
  spec.schedulerName = SCHEDULER_NAME;
  const declared: DeclaredResources = request.pod.resources;
  spec.containers = pinContainers(
    declaredContainerResources(spec.containers as Json[], declared),
    request.gpuDevices,
  );
  if (Array.isArray(spec.initContainers))
    spec.initContainers = declaredInitContainerResources(spec.initContainers as Json[], declared);
  delete spec.nodeName; // placement happens through the Binding, after creation
  const metadata = (source.metadata as Json | undefined) ?? {};
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: clusterPodName(request),
      namespace,
      labels: {
        ...((metadata.labels as Record<string, string> | undefined) ?? {}),
        [JOB_ID_KEY]: labelValue(request.job.id),
        [POD_GROUP_KEY]: labelValue(request.job.name),
      },
      annotations: {
        ...((metadata.annotations as Record<string, string> | undefined) ?? {}),
        ...jobAnnotations(request),
        [JOB_NAME_KEY]: request.job.name,
        [QUEUE_KEY]: request.job.queue,
        [POD_GROUP_KEY]: request.job.name,
        ...(request.pod.resources.gpuFraction > 0
          ? { [GPU_FRACTION_KEY]: String(request.pod.resources.gpuFraction) }
          : {}),
        ...(request.pod.resources.gpuMemory > 0
          ? { [GPU_MEMORY_KEY]: String(request.pod.resources.gpuMemory) }
          : {}),
      },
    },
    spec: spec as unknown as V1Pod["spec"],
  };
}

/** The Binding of the pod to its node. The API server copies a Binding's annotations onto
 * the pod, which is how pods users created themselves learn their job id, GPU groups and
 * devices (their environment is theirs: NVIDIA_VISIBLE_DEVICES is only set on pods we create). */
export function podBinding(request: BindRequestMessage, namespace: string): V1Binding {
  return {
    apiVersion: "v1",
    kind: "Binding",
    metadata: { name: clusterPodName(request), namespace, annotations: jobAnnotations(request) },
    target: { apiVersion: "v1", kind: "Node", name: request.node },
  };
}

function jobAnnotations(request: BindRequestMessage): Record<string, string> {
  return {
    [JOB_ID_KEY]: request.job.id,
    [POD_NAME_KEY]: request.pod.name,
    [GPU_GROUPS_KEY]: request.gpuGroups.join(","),
    ...(request.gpuDevices.length ? { [GPU_DEVICES_KEY]: request.gpuDevices.join(",") } : {}),
    [BIND_REQUEST_KEY]: request.id,
    [BIND_GENERATION_KEY]: String(request.generation),
  };
}

/** Label values: at most 63 of [A-Za-z0-9-_.], alphanumeric at both ends. */
function labelValue(value: string): string {
  return value
    .replace(/[^A-Za-z0-9._-]/g, "-")
    .slice(0, 63)
    .replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, "");
}
