// A task's template may not ask for more than the task declares: the scheduler counts the
// declared resources, and the agent gives the pod exactly those.
import { resourceOverAsk } from "../../protocol/pod-resources.js";
import type { InvalidInputError } from "../errors.js";
import { invalidAt } from "./parse.js";
import { isObject } from "./pod-security/template.js";
import type { JobSpec } from "./submit-job.js";

export function templateResourceError(spec: JobSpec): InvalidInputError | null {
  for (const [i, task] of spec.tasks.entries()) {
    const template = task.template;
    if (!isObject(template)) continue;
    const isPod = "spec" in template;
    const podSpec = isPod ? template.spec : template;
    if (!isObject(podSpec)) continue;
    const over = resourceOverAsk(podSpec, {
      cpuMillis: task.cpuMillis,
      memory: Number(task.memory),
      gpus: task.gpus,
    });
    if (over)
      return invalidAt(["tasks", i, "template", ...(isPod ? ["spec"] : []), ...over.path], over.message);
  }
  return null;
}
