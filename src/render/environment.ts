// The rendezvous environment of a job's pods: where each pod stands in the gang and how to reach
// its peers, in fleetq's own variables and in those distributed frameworks already read (with
// the meaning the Kubeflow training operator and torchrun give them). Every container of every
// pod gets it; a variable the template sets itself keeps the template's value.
import { jobServiceName, podHostname } from "./names.js";
import {
  DEFAULT_RENDEZVOUS_PORT,
  type EnvVar,
  MAX_LISTED_PEERS,
  type PodPlace,
  type RenderJob,
  type RenderTask,
} from "./types.js";

export const worldSize = (job: RenderJob): number => job.tasks.reduce((n, t) => n + t.replicas, 0);

/** A multi-pod job has a headless Service its pods are reached under. */
export const hasService = (job: RenderJob): boolean => worldSize(job) > 1;

/** Every pod of the job in rank order: tasks in spec order, each task's pods by index. */
export function podPlaces(job: RenderJob): PodPlace[] {
  const places: PodPlace[] = [];
  for (const task of job.tasks)
    for (let index = 0; index < task.replicas; index++) places.push({ task, index, rank: places.length });
  return places;
}

/** The pod named "<task>-<index>" of the job; null when the job has no such pod. */
export function podPlace(job: RenderJob, pod: string): PodPlace | null {
  let rank = 0;
  for (const task of job.tasks) {
    const prefix = `${task.name}-`;
    if (pod.startsWith(prefix)) {
      const index = Number(pod.slice(prefix.length));
      if (Number.isInteger(index) && index >= 0 && index < task.replicas && `${prefix}${index}` === pod)
        return { task, index, rank: rank + index };
    }
    rank += task.replicas;
  }
  return null;
}

/** How a peer is reached from any pod of the job: "<task>-<i>.<service>" (a one-pod job: its
 * hostname alone, which the pod resolves itself). */
export function peerAddress(job: RenderJob, task: RenderTask, index: number): string {
  const host = podHostname(`${task.name}-${index}`);
  return hasService(job) ? `${host}.${jobServiceName(job.id, job.name)}` : host;
}

/** Processes per pod for torchrun: one per whole GPU, else one. */
function processesPerPod(task: RenderTask): number {
  return task.resources.gpus >= 1 ? task.resources.gpus : 1;
}

/** The variables of the pod at `place`, in a fixed order (a template may refer to them as $(NAME)). */
export function rendezvousEnvironment(job: RenderJob, place: PodPlace, restarts: number): EnvVar[] {
  const size = worldSize(job);
  const first = job.tasks[0]!;
  const master = peerAddress(job, first, 0);
  const port = String(job.rendezvousPort ?? DEFAULT_RENDEZVOUS_PORT);
  const elastic = job.minMember < size;
  const env: [string, string][] = [
    ["FLEETQ_JOB_ID", job.id],
    ["FLEETQ_JOB_NAME", job.name],
    ["FLEETQ_TASK", place.task.name],
    ["FLEETQ_TASK_INDEX", String(place.index)],
    ["FLEETQ_RANK", String(place.rank)],
    ["FLEETQ_WORLD_SIZE", String(size)],
    ["FLEETQ_RESTART_ATTEMPT", String(restarts)],
    ["FLEETQ_TASKS", job.tasks.map((t) => `${t.name}:${t.replicas}`).join(",")],
    ["FLEETQ_SUBDOMAIN", hasService(job) ? jobServiceName(job.id, job.name) : ""],
  ];
  if (size <= MAX_LISTED_PEERS)
    env.push([
      "FLEETQ_PEERS",
      podPlaces(job)
        .map((p) => peerAddress(job, p.task, p.index))
        .join(","),
    ]);
  env.push(
    ["MASTER_ADDR", master],
    ["MASTER_PORT", port],
    ["WORLD_SIZE", String(size)],
    ["RANK", String(place.rank)],
    ["PET_NNODES", elastic ? `${job.minMember}:${size}` : String(size)],
    ["PET_NODE_RANK", String(place.rank)],
    ["PET_NPROC_PER_NODE", String(processesPerPod(place.task))],
    ["PET_MASTER_ADDR", master],
    ["PET_MASTER_PORT", port],
  );
  // A range of nodes needs a dynamic rendezvous (torchrun's static one takes a fixed count).
  if (elastic)
    env.push(
      ["PET_RDZV_BACKEND", "c10d"],
      ["PET_RDZV_ENDPOINT", `${master}:${port}`],
      ["PET_RDZV_ID", job.id],
    );
  env.push(["JOB_COMPLETION_INDEX", String(place.index)]);
  return env.map(([name, value]) => ({ name, value }));
}

/** What the templates of the job set themselves of the rendezvous environment: a warning each
 * (the template's value wins). `where` names a task's template as the caller's input does. */
export function templateOverrides(job: RenderJob, where: (task: number) => string): string[] {
  const places = podPlaces(job);
  if (!places.length) return [];
  const ours = new Set(rendezvousEnvironment(job, places[0]!, 0).map((e) => e.name));
  const warnings: string[] = [];
  job.tasks.forEach((task, i) => {
    for (const { list, container } of templateContainers(task.template))
      for (const name of containerEnvNames(container))
        if (ours.has(name))
          warnings.push(
            `${where(i)}: ${list} ${JSON.stringify(containerName(container))} sets ${name} itself; its value is kept instead of fleetq's`,
          );
  });
  return warnings;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === "object" && !Array.isArray(v);

/** The pod spec of a template (a Pod with spec, or a PodSpec); null when it is neither. */
export function templatePodSpec(template: unknown): Json | null {
  if (!isObject(template)) return null;
  const spec = "spec" in template ? template.spec : template;
  return isObject(spec) ? spec : null;
}

function templateContainers(template: unknown): { list: "container" | "init container"; container: Json }[] {
  const spec = templatePodSpec(template);
  if (!spec) return [];
  const of = (key: string, list: "container" | "init container") =>
    (Array.isArray(spec[key]) ? (spec[key] as unknown[]) : [])
      .filter(isObject)
      .map((container) => ({ list, container }));
  return [...of("initContainers", "init container"), ...of("containers", "container")];
}

const containerName = (c: Json): string => (typeof c.name === "string" ? c.name : "");

/** The names a container's env sets. */
export function containerEnvNames(container: Json): string[] {
  return (Array.isArray(container.env) ? container.env : [])
    .map((e: unknown) => (isObject(e) && typeof e.name === "string" ? e.name : null))
    .filter((n): n is string => n !== null);
}
