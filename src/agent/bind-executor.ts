// Carries out one BindRequest on the backend and turns whatever happens into a truthful
// result: backends answer idempotently, and an unexpected exception is a failed request,
// never a lost one.
import type { BindRequestMessage } from "../protocol/bind-request.js";
import type { ClusterBackend, RequestOutcome } from "./backends/types.js";
import type { BindResultReport } from "./control-plane.js";
import { describe } from "./graphql-client.js";
import type { TemplateCache } from "./template-cache.js";

export async function executeRequest(
  backend: ClusterBackend,
  cluster: string,
  request: BindRequestMessage,
  templates: TemplateCache,
): Promise<BindResultReport> {
  let outcome: RequestOutcome;
  if (request.cluster !== cluster) {
    outcome = {
      ok: false,
      message: `request for cluster ${request.cluster} reached the agent of ${cluster}`,
    };
  } else {
    try {
      outcome =
        request.kind === "bind"
          ? await backend.bind(request, await templateOf(backend, request, templates))
          : await backend.evict(request);
    } catch (err) {
      outcome = { ok: false, message: `${request.kind} failed: ${describe(err)}` };
    }
  }
  return { bindRequest: request.id, ok: outcome.ok, message: outcome.message };
}

/** Pods users created have no template: their existing pod is bound. */
async function templateOf(
  backend: ClusterBackend,
  request: BindRequestMessage,
  templates: TemplateCache,
): Promise<unknown> {
  if (!backend.needsTemplates || request.job.createdInCluster) return null;
  try {
    return await templates.get(request.job.id, request.pod.task);
  } catch (err) {
    throw new Error(`cannot fetch the pod template of task ${request.pod.task}: ${describe(err)}`);
  }
}
