// Rendering a job into the Kubernetes objects that run it: one definition for the agent that
// creates them, `fleetq render` and the API's renderJob that show them, and Pod.environment.
import { stringify } from "yaml";
import type { V1Pod, V1Service } from "@kubernetes/client-node";
import { podPlaces } from "./environment.js";
import { renderPod } from "./pod.js";
import { renderService } from "./service.js";
import type { RenderJob } from "./types.js";

export { clusterPodName, jobServiceName, labelValue, podHostname, uniquePodName } from "./names.js";
export {
  hasService,
  peerAddress,
  podPlace,
  podPlaces,
  rendezvousEnvironment,
  templateOverrides,
  worldSize,
} from "./environment.js";
export { renderPod } from "./pod.js";
export { renderService } from "./service.js";
export {
  DEFAULT_RENDEZVOUS_PORT,
  type EnvVar,
  MAX_LISTED_PEERS,
  type PodPlace,
  type RenderJob,
  type RenderTask,
  type RenderWorkload,
} from "./types.js";

/** The job's objects, as the agent creates them for its attempt after `restarts` restarts: the
 * Service (multi-pod jobs), then every pod in rank order. */
export function renderJob(job: RenderJob, restarts = 0): (V1Service | V1Pod)[] {
  const service = renderService(job);
  const pods = podPlaces(job).map((place) => renderPod(job, place, restarts));
  return service ? [service, ...pods] : pods;
}

/** Objects as one multi-document YAML stream. */
export function objectsYaml(objects: readonly object[]): string {
  return objects.map((o) => stringify(o, { lineWidth: 0 })).join("---\n");
}
