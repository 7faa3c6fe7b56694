// What the jobs this agent creates pods of are rendered from, fetched from the API once per job
// (jobRenderSpec, with the agent's token) and kept for the most recent jobs: a BindRequest
// carries only the pod's name and task.
import type { RenderJob } from "../render/index.js";
import type { ControlPlane } from "./control-plane.js";

/** Jobs kept (a gang's binds come together; older jobs are fetched again). */
const KEEP_JOBS = 512;

export class JobSpecCache {
  private readonly jobs = new Map<string, Promise<RenderJob>>();

  constructor(private readonly controlPlane: Pick<ControlPlane, "jobRenderSpec">) {}

  /** The job's render input; throws when the API does not answer or has no such job. */
  async get(job: string): Promise<RenderJob> {
    let spec = this.jobs.get(job);
    if (spec) {
      // Most recently used last.
      this.jobs.delete(job);
    } else {
      spec = this.controlPlane.jobRenderSpec(job);
      // A failed fetch is not kept: the next request tries again.
      spec.catch(() => this.jobs.delete(job));
    }
    this.jobs.set(job, spec);
    while (this.jobs.size > KEEP_JOBS) this.jobs.delete(this.jobs.keys().next().value!);
    return spec;
  }
}
