// The Pod the Kubernetes backend creates for a BindRequest: the job's pod as src/render renders
// it (the one definition `fleetq render` shows), with what only the bind knows added — the
// BindRequest and cluster generation it carries out, the pod's GPU groups, and the GPU devices
// the control plane chose (annotation + NVIDIA_VISIBLE_DEVICES in the containers that ask for GPUs,
// "void" in every other container, init containers included).
import type { V1Binding, V1Pod } from "@kubernetes/client-node";
import type { BindRequestMessage } from "../../../protocol/bind-request.js";
import {
  BIND_GENERATION_KEY,
  BIND_REQUEST_KEY,
  GPU_DEVICES_KEY,
  GPU_GROUPS_KEY,
  JOB_ID_KEY,
  POD_NAME_KEY,
} from "../../../protocol/labels.js";
import { clusterPodName, podPlace, type RenderJob, renderPod } from "../../../render/index.js";
import { pinContainers, pinInitContainers } from "./gpu-pinning.js";

type Json = Record<string, unknown>;

/** Throws when the job cannot make the request's pod (the bind then fails with the reason). */
export function podManifest(request: BindRequestMessage, job: RenderJob): V1Pod {
  const place = podPlace(job, request.pod.name);
  if (!place) throw new Error(`job ${job.name} has no pod ${request.pod.name} to create`);
  const pod = renderPod(job, place, request.job.restarts);
  pod.metadata!.annotations = { ...pod.metadata!.annotations, ...bindAnnotations(request) };
  const spec = pod.spec as unknown as Json;
  // A shared-GPU pod (a fraction or GPU memory of a device) asks for no nvidia.com/gpu.
  const shared = request.pod.resources.gpus === 0;
  spec.containers = pinContainers(spec.containers as Json[], request.gpuDevices, shared);
  if (Array.isArray(spec.initContainers))
    spec.initContainers = pinInitContainers(spec.initContainers as Json[], request.gpuDevices);
  return pod;
}

/** The Binding of the pod to its node. The API server copies a Binding's annotations onto
 * the pod, which is how pods users created themselves learn their job id, GPU groups and
 * devices (their environment is theirs: NVIDIA_VISIBLE_DEVICES is only set on pods we create). */
export function podBinding(
  request: BindRequestMessage,
  namespace: string,
  name = clusterPodName(request),
): V1Binding {
  return {
    apiVersion: "v1",
    kind: "Binding",
    metadata: { name, namespace, annotations: bindAnnotations(request) },
    target: { apiVersion: "v1", kind: "Node", name: request.node },
  };
}

/** What a pod carries of the bind that placed it (on pods we create, and through the Binding on
 * pods users created). */
export function bindAnnotations(request: BindRequestMessage): Record<string, string> {
  return {
    [JOB_ID_KEY]: request.job.id,
    [POD_NAME_KEY]: request.pod.name,
    [GPU_GROUPS_KEY]: request.gpuGroups.join(","),
    ...(request.gpuDevices.length ? { [GPU_DEVICES_KEY]: request.gpuDevices.join(",") } : {}),
    [BIND_REQUEST_KEY]: request.id,
    [BIND_GENERATION_KEY]: String(request.generation),
  };
}
