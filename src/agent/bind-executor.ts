// Carries out one BindRequest on the backend and turns whatever happens into a truthful
// result: backends answer idempotently, and an unexpected exception is a failed request,
// never a lost one.
import type { BindRequestMessage } from "../protocol/bind-request.js";
import type { ClusterBackend, RequestOutcome } from "./backends/types.js";
import type { BindResultReport } from "./control-plane.js";
import { describe } from "./graphql-client.js";
import type { JobSpecCache } from "./job-spec-cache.js";
import type { RenderJob } from "../render/index.js";

export async function executeRequest(
  backend: ClusterBackend,
  cluster: string,
  request: BindRequestMessage,
  jobs: JobSpecCache,
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
          ? await backend.bind(request, await renderInputOf(backend, request, jobs))
          : request.kind === "evict"
            ? await backend.evict(request)
            : await deleteWorkload(backend, request, jobs);
    } catch (err) {
      outcome = { ok: false, message: `${request.kind} failed: ${describe(err)}` };
    }
  }
  return { bindRequest: request.id, ok: outcome.ok, message: outcome.message };
}

/** A workload's object removed with everything it made (its job cancelled). */
async function deleteWorkload(
  backend: ClusterBackend,
  request: BindRequestMessage,
  jobs: JobSpecCache,
): Promise<RequestOutcome> {
  if (!backend.deleteWorkload) return { ok: false, message: `the ${backend.kind} backend runs no workloads` };
  let job: RenderJob;
  try {
    job = await jobs.get(request.job.id);
  } catch (err) {
    throw new Error(`cannot fetch job ${request.job.id}'s workload: ${describe(err)}`);
  }
  return backend.deleteWorkload(request, job);
}

/** Pods users created are bound as they are: nothing to render. A workload's pods are its
 * controller's, but the agent creates its object from the job. */
async function renderInputOf(
  backend: ClusterBackend,
  request: BindRequestMessage,
  jobs: JobSpecCache,
): Promise<RenderJob | null> {
  if ((!backend.rendersPods && !request.job.workload) || request.job.createdInCluster) return null;
  try {
    return await jobs.get(request.job.id);
  } catch (err) {
    throw new Error(`cannot fetch what job ${request.job.id}'s pods are made from: ${describe(err)}`);
  }
}
