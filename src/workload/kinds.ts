// The kinds of workload fleetq takes, one definition each: where their pod sets are, how many
// pods each has and the gang minimum, the Kubernetes API of their objects, the labels their
// controllers put on the pods they make (which say the pod's task and index), and the status
// conditions that end them.
import { INDEX_OFFSET_KEY } from "../protocol/labels.js";
import {
  type WorkloadKindName,
  WorkloadError,
  type WorkloadOutcome,
  type WorkloadResource,
  type WorkloadSlot,
} from "./types.js";

type Json = Record<string, unknown>;

/** One pod set of a manifest: its task name, pod count and the path of its pod template. */
export interface PodSet {
  name: string;
  replicas: number;
  templatePath: readonly PropertyKey[];
  /** A Job whose completions exceed its parallelism: `replicas` pods at a time, in waves, each
   * pod of a later wave taking the place of one that finished (whatever its index). */
  waves?: boolean;
  /** Pods that must succeed (more than `replicas` when in waves). */
  completions: number;
}

export interface KindDefinition {
  kind: WorkloadKindName;
  apiVersion: string;
  resource: WorkloadResource;
  podSets(manifest: Json): PodSet[];
  /** The gang minimum of the pod sets, `total` pods (total when the manifest says nothing). */
  minMember(manifest: Json, total: number, sets: readonly PodSet[]): number;
  slotOf(labels: Record<string, string>, annotations: Record<string, string>): WorkloadSlot | null;
  outcome(object: Json): WorkloadOutcome | null;
  /** Annotations fleetq adds to a pod set's template so that slotOf can read its pods. */
  templateMarks?(manifest: Json, podSet: string): Record<string, string>;
}

const isObject = (v: unknown): v is Json => v !== null && typeof v === "object" && !Array.isArray(v);

/** The value at `path`, or undefined. */
export function at(root: unknown, path: readonly PropertyKey[]): unknown {
  let v = root;
  for (const key of path) v = isObject(v) || Array.isArray(v) ? (v as Json)[key as string] : undefined;
  return v;
}

/** A whole number at `path` (`fallback` when absent), at least `min`. */
function count(root: Json, path: readonly PropertyKey[], fallback: number, min = 0): number {
  const v = at(root, path);
  if (v === undefined || v === null) return fallback;
  if (typeof v !== "number" || !Number.isInteger(v) || v < min)
    throw new WorkloadError(path, `must be a whole number${min > 0 ? ` of at least ${min}` : " >= 0"}`);
  return v;
}

/** The condition of `type` that holds (status "True") in the object's status. */
function holds(object: Json, ...types: string[]): { reason: string; message: string } | null {
  const conditions = at(object, ["status", "conditions"]);
  if (!Array.isArray(conditions)) return null;
  const c = conditions.find((x) => isObject(x) && types.includes(x.type as string) && x.status === "True") as
    | Json
    | undefined;
  return c ? { reason: String(c.reason ?? c.type), message: String(c.message ?? "") } : null;
}

const index = (value: string | undefined): number | null =>
  value !== undefined && /^\d+$/.test(value) ? Number(value) : null;

const COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index";

/** A Job's pods at once: parallelism (default 1), at most completions; in waves when its
 * completions exceed its parallelism. */
function jobPods(job: Json): { replicas: number; waves: boolean; completions: number } {
  const parallelism = count(job, ["parallelism"], 1, 1);
  const completions = at(job, ["completions"]) === undefined ? null : count(job, ["completions"], 1, 1);
  if (completions !== null && completions > parallelism)
    return { replicas: parallelism, waves: true, completions };
  const replicas = completions ?? parallelism;
  return { replicas, waves: false, completions: replicas };
}

/** All pods at once, except that a pod set running in waves needs only one (its pods are
 * separate pieces of work; a later wave may have fewer pods left than the gang). */
const gangOfSets = (_m: Json, _total: number, sets: readonly PodSet[]) =>
  sets.reduce((n, set) => n + (set.waves ? 1 : set.replicas), 0);

const batchJob: KindDefinition = {
  kind: "Job",
  apiVersion: "batch/v1",
  resource: { group: "batch", version: "v1", plural: "jobs" },
  podSets: (m) => [{ name: "job", ...jobPods((m.spec as Json) ?? {}), templatePath: ["spec", "template"] }],
  minMember: gangOfSets,
  slotOf: (labels, annotations) => ({
    task: "job",
    index: index(labels[COMPLETION_INDEX] ?? annotations[COMPLETION_INDEX]),
  }),
  outcome: (o) => {
    const done = holds(o, "Complete", "SuccessCriteriaMet");
    if (done) return { state: "SUCCEEDED", ...done };
    const failed = holds(o, "Failed", "FailureTarget");
    return failed ? { state: "FAILED", ...failed } : null;
  },
};

const JOBSET = "jobset.sigs.k8s.io";

const jobSet: KindDefinition = {
  kind: "JobSet",
  apiVersion: "jobset.x-k8s.io/v1alpha2",
  resource: { group: "jobset.x-k8s.io", version: "v1alpha2", plural: "jobsets" },
  podSets: (m) => {
    const jobs = at(m, ["spec", "replicatedJobs"]);
    if (!Array.isArray(jobs) || jobs.length === 0)
      throw new WorkloadError(["spec", "replicatedJobs"], "a JobSet needs at least one replicated job");
    return jobs.flatMap((rj, i) => {
      const path = ["spec", "replicatedJobs", i];
      if (!isObject(rj) || typeof rj.name !== "string" || !rj.name)
        throw new WorkloadError([...path, "name"], "a replicated job needs a name");
      const replicas = count(m, [...path, "replicas"], 1, 1);
      const pods = jobPods((at(rj, ["template", "spec"]) as Json) ?? {});
      return Array.from({ length: replicas }, (_, j) => ({
        name: `${rj.name}-${j}`,
        ...pods,
        templatePath: [...path, "template", "spec", "template"],
      }));
    });
  },
  minMember: gangOfSets,
  slotOf: (labels, annotations) => {
    const read = (key: string) => labels[key] ?? annotations[key];
    const rj = read(`${JOBSET}/replicatedjob-name`);
    const job = index(read(`${JOBSET}/job-index`));
    if (!rj || job === null) return null;
    return { task: `${rj}-${job}`, index: index(read(COMPLETION_INDEX)) };
  },
  outcome: (o) => {
    const done = holds(o, "Completed");
    if (done) return { state: "SUCCEEDED", ...done };
    const failed = holds(o, "Failed");
    return failed ? { state: "FAILED", ...failed } : null;
  },
};

const KUBEFLOW = "training.kubeflow.org";

/** A training-operator job: replica specs by type, in the given order (rank 0 first). */
function trainingJob(
  kind: "PyTorchJob" | "MPIJob",
  apiVersion: string,
  plural: string,
  specsKey: string,
  types: readonly string[],
  minMember: KindDefinition["minMember"],
  slots: Pick<KindDefinition, "slotOf" | "templateMarks">,
): KindDefinition {
  const [group, version] = apiVersion.split("/") as [string, string];
  return {
    kind,
    apiVersion,
    resource: { group, version, plural },
    podSets: (m) => {
      const specs = at(m, ["spec", specsKey]);
      if (!isObject(specs) || !Object.keys(specs).length)
        throw new WorkloadError(["spec", specsKey], `a ${kind} needs ${specsKey} (${types.join(", ")})`);
      for (const type of Object.keys(specs))
        if (!types.includes(type))
          throw new WorkloadError(
            ["spec", specsKey, type],
            `unknown replica type (a ${kind} has ${types.join(", ")})`,
          );
      return types
        .filter((type) => specs[type] !== undefined)
        .map((type) => {
          const replicas = count(m, ["spec", specsKey, type, "replicas"], 1, 1);
          return {
            name: type.toLowerCase(),
            replicas,
            completions: replicas,
            templatePath: ["spec", specsKey, type, "template"],
          };
        });
    },
    minMember,
    ...slots,
    outcome: (o) => {
      const done = holds(o, "Succeeded");
      if (done) return { state: "SUCCEEDED", ...done };
      const failed = holds(o, "Failed");
      return failed ? { state: "FAILED", ...failed } : null;
    },
  };
}

/** runPolicy.schedulingPolicy.minAvailable, when the manifest sets it. */
const minAvailable = (m: Json): number | null => {
  const v = at(m, ["spec", "runPolicy", "schedulingPolicy", "minAvailable"]);
  return v === undefined || v === null
    ? null
    : count(m, ["spec", "runPolicy", "schedulingPolicy", "minAvailable"], 1, 1);
};

/** The training operator labels each pod with its replica type (lowercase) and index. */
const byReplicaType: Pick<KindDefinition, "slotOf"> = {
  slotOf: (labels) => {
    const type = labels[`${KUBEFLOW}/replica-type`];
    const i = index(labels[`${KUBEFLOW}/replica-index`]);
    return type && i !== null ? { task: type.toLowerCase(), index: i } : null;
  },
};

/** The MPI operator labels its pods with their role; a worker also with its index, which counts
 * from 1 when the launcher runs as a worker too (runLauncherAsWorker): fleetq marks such workers'
 * template with the offset. */
const byMpiRole: Pick<KindDefinition, "slotOf" | "templateMarks"> = {
  slotOf: (labels, annotations) => {
    const role = labels[`${KUBEFLOW}/job-role`];
    if (role === "launcher") return { task: "launcher", index: 0 };
    const i = index(labels[`${KUBEFLOW}/replica-index`]);
    if (role !== "worker" || i === null) return null;
    return { task: "worker", index: i - (index(annotations[INDEX_OFFSET_KEY]) ?? 0) };
  },
  templateMarks: (m, podSet): Record<string, string> =>
    podSet === "worker" && at(m, ["spec", "runLauncherAsWorker"]) === true ? { [INDEX_OFFSET_KEY]: "1" } : {},
};

const pyTorchJob = trainingJob(
  "PyTorchJob",
  "kubeflow.org/v1",
  "pytorchjobs",
  "pytorchReplicaSpecs",
  ["Master", "Worker"],
  (m, total) => {
    const set = minAvailable(m);
    if (set !== null) return set;
    // An elastic job starts with its masters and the fewest workers it runs with.
    const min = at(m, ["spec", "elasticPolicy", "minReplicas"]);
    if (min === undefined || min === null) return total;
    const masters =
      at(m, ["spec", "pytorchReplicaSpecs", "Master"]) === undefined
        ? 0
        : count(m, ["spec", "pytorchReplicaSpecs", "Master", "replicas"], 1, 1);
    return masters + count(m, ["spec", "elasticPolicy", "minReplicas"], 1, 1);
  },
  byReplicaType,
);

const mpiJob = trainingJob(
  "MPIJob",
  "kubeflow.org/v2beta1",
  "mpijobs",
  "mpiReplicaSpecs",
  ["Launcher", "Worker"],
  (m, total) => minAvailable(m) ?? total,
  byMpiRole,
);

export const KINDS: readonly KindDefinition[] = [batchJob, jobSet, pyTorchJob, mpiJob];

/** The kind's definition; null for a kind fleetq does not take. */
export function kindOf(apiVersion: unknown, kind: unknown): KindDefinition | null {
  return KINDS.find((k) => k.kind === kind && k.apiVersion === apiVersion) ?? null;
}

export function kindNamed(kind: WorkloadKindName): KindDefinition {
  return KINDS.find((k) => k.kind === kind)!;
}

/** "batch/v1 Job, jobset.x-k8s.io/v1alpha2 JobSet, …": for the error listing what is taken. */
export const SUPPORTED_KINDS = KINDS.map((k) => `${k.apiVersion} ${k.kind}`).join(", ");
