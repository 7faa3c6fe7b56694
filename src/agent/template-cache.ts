// The pod templates of the jobs this agent binds pods of, fetched from the API once per job
// (jobTemplates, with the agent's token) and kept for the most recent jobs: a BindRequest
// carries only the task's name.
import type { ControlPlane } from "./control-plane.js";

/** Jobs whose templates are kept (a gang's binds come together; older jobs are fetched again). */
const KEEP_JOBS = 512;

export class TemplateCache {
  private readonly jobs = new Map<string, Promise<Map<string, unknown>>>();

  constructor(private readonly controlPlane: Pick<ControlPlane, "jobTemplates">) {}

  /** The task's template; throws when the API does not answer or the job has no such task. */
  async get(job: string, task: string): Promise<unknown> {
    let templates = this.jobs.get(job);
    if (templates) {
      // Most recently used last.
      this.jobs.delete(job);
    } else {
      templates = this.controlPlane
        .jobTemplates(job)
        .then((tasks) => new Map(tasks.map((t) => [t.task, t.template])));
      // A failed fetch is not kept: the next request tries again.
      templates.catch(() => this.jobs.delete(job));
    }
    this.jobs.set(job, templates);
    while (this.jobs.size > KEEP_JOBS) this.jobs.delete(this.jobs.keys().next().value!);
    const byTask = await templates;
    if (!byTask.has(task)) throw new Error(`job ${job} has no task "${task}"`);
    return byTask.get(task);
  }
}
