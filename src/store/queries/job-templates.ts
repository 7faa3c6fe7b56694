// The pod templates of a job's tasks, which agents fetch once per job instead of receiving
// them with every BindRequest.
import { prismaOf } from "../client.js";
import type { Store } from "../store.js";

export interface JobTemplates {
  /** The cluster the job is on (null: not admitted). */
  cluster: string | null;
  tasks: { name: string; template: unknown }[];
}

/** null when the job does not exist. */
export async function jobTemplates(store: Store, job: string): Promise<JobTemplates | null> {
  const row = await prismaOf(store).job.findUnique({
    where: { id: job },
    select: {
      clusterName: true,
      tasks: { select: { name: true, template: true }, orderBy: { name: "asc" } },
    },
  });
  return row ? { cluster: row.clusterName, tasks: row.tasks } : null;
}
