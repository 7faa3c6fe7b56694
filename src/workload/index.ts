// Kubernetes workloads (Job, JobSet, PyTorchJob, MPIJob) as fleetq takes them: `deriveWorkload`
// turns a manifest into the tasks fleetq schedules (the control plane, at submit);
// `workloadObject` is what the agent creates on the chosen cluster; `workloadSlot` maps a pod
// the object's controller made to its task and index; `workloadOutcome` reads the object's end.
import { randomBytes } from "node:crypto";
import {
  JOB_ID_KEY,
  JOB_NAME_KEY,
  QUEUE_KEY,
  SCHEDULER_NAME,
  SIMULATED_DURATION_KEY,
  WAVES_KEY,
  WORKLOAD_KIND_KEY,
} from "../protocol/labels.js";
import { labelValue } from "../render/names.js";
import { at, type KindDefinition, kindNamed, kindOf, SUPPORTED_KINDS } from "./kinds.js";
import { effectiveRequest } from "./pod-request.js";
import {
  type DefaultRequest,
  type Workload,
  type WorkloadKindName,
  WorkloadError,
  type WorkloadOutcome,
  type WorkloadSlot,
  type WorkloadTask,
} from "./types.js";

export { KINDS, SUPPORTED_KINDS, kindNamed } from "./kinds.js";
export * from "./types.js";

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => v !== null && typeof v === "object" && !Array.isArray(v);

/** The label a manifest names its queue with, and Kueue's, which fleetq reads too. */
export const QUEUE_LABELS = [QUEUE_KEY, "kueue.x-k8s.io/queue-name"] as const;

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const TASK_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Whether a submitted document is a Kubernetes manifest (it has apiVersion and kind). */
export function isManifest(value: unknown): boolean {
  return isObject(value) && typeof value.apiVersion === "string" && typeof value.kind === "string";
}

/** Throws WorkloadError unless the manifest is an object of a kind fleetq takes. */
export function checkKind(manifest: unknown): void {
  kindDefinition(manifest);
}

function kindDefinition(manifest: unknown): KindDefinition {
  if (!isObject(manifest)) throw new WorkloadError([], "a manifest is one Kubernetes object (a mapping)");
  const def = kindOf(manifest.apiVersion, manifest.kind);
  if (!def)
    throw new WorkloadError(
      ["kind"],
      `${String(manifest.apiVersion)} ${String(manifest.kind)} is not a kind fleetq takes (it takes ${SUPPORTED_KINDS})`,
    );
  return def;
}

/**
 * The workload a manifest describes. Pod templates that ask for no cpu or memory get `defaults`
 * written in. Throws WorkloadError naming the field for anything fleetq would not run as written.
 */
export function deriveWorkload(manifest: unknown, defaults: DefaultRequest): Workload {
  const def = kindDefinition(manifest);
  const copy = structuredClone(manifest as Json);
  const metadata = isObject(copy.metadata) ? copy.metadata : {};
  const name = objectName(metadata);
  const podSets = def.podSets(copy);
  const tasks: WorkloadTask[] = [];
  const prepared = new Map<string, { template: Json; request: WorkloadTask["resources"] }>();
  for (const set of podSets) {
    if (!TASK_NAME.test(set.name) || set.name.length > 40)
      throw new WorkloadError(
        set.templatePath.slice(0, -1),
        `"${set.name}" is too long or not a DNS label to name a task (at most 40 characters)`,
      );
    const key = JSON.stringify(set.templatePath);
    let ready = prepared.get(key);
    if (!ready) {
      ready = prepareTemplate(copy, set.templatePath, defaults);
      prepared.set(key, ready);
    }
    const spec = ready.template.spec as Json;
    const selector = isObject(spec.nodeSelector) ? (spec.nodeSelector as Record<string, string>) : {};
    tasks.push({
      name: set.name,
      replicas: set.replicas,
      resources: ready.request,
      template: ready.template,
      templatePath: set.templatePath,
      nodeSelector: Object.entries(selector)
        .filter(([key]) => key !== GPU_PRODUCT)
        .map(([key, value]) => ({ key, values: [String(value)] })),
      gpuModel: typeof selector[GPU_PRODUCT] === "string" ? selector[GPU_PRODUCT] : null,
    });
  }
  const total = tasks.reduce((n, t) => n + t.replicas, 0);
  const minMember = def.minMember(copy, total, podSets);
  if (minMember > total)
    throw new WorkloadError(["spec"], `the gang minimum (${minMember}) exceeds the pods (${total})`);
  copy.metadata = { ...metadata, name };
  delete (copy.metadata as Json).generateName;
  const labels = isObject(metadata.labels) ? (metadata.labels as Record<string, string>) : {};
  return {
    kind: def.kind,
    apiVersion: def.apiVersion,
    name,
    namespace: typeof metadata.namespace === "string" ? metadata.namespace : null,
    manifest: copy,
    tasks,
    minMember,
    queue: QUEUE_LABELS.map((k) => labels[k]).find((q) => typeof q === "string" && q !== "") ?? null,
    simulatedDurationSeconds: simulatedDuration(metadata),
  };
}

function simulatedDuration(metadata: Json): number | null {
  const value = isObject(metadata.annotations) ? metadata.annotations[SIMULATED_DURATION_KEY] : undefined;
  if (value === undefined) return null;
  const text = String(value);
  if (!/^\d{1,9}$/.test(text))
    throw new WorkloadError(
      ["metadata", "annotations", SIMULATED_DURATION_KEY],
      `"${text}" is not a whole number of seconds`,
    );
  return Number(text);
}

const GPU_PRODUCT = "nvidia.com/gpu.product";

/** metadata.name, or generateName with five random characters (as the API server does). */
function objectName(metadata: Json): string {
  let name = metadata.name;
  if ((name === undefined || name === "") && typeof metadata.generateName === "string") {
    const alphabet = "bcdfghjklmnpqrstvwxz2456789";
    name = metadata.generateName + [...randomBytes(5)].map((b) => alphabet[b % alphabet.length]).join("");
  }
  if (typeof name !== "string" || !name)
    throw new WorkloadError(
      ["metadata", "name"],
      "the object needs metadata.name (or metadata.generateName)",
    );
  if (!DNS_LABEL.test(name) || name.length > 63)
    throw new WorkloadError(
      ["metadata", "name"],
      `"${name}" is not a DNS label (lowercase letters, digits and '-', at most 63 characters)`,
    );
  return name;
}

/** The pod template at `path` with its containers' default requests written in, and its request. */
function prepareTemplate(root: Json, path: readonly PropertyKey[], defaults: DefaultRequest) {
  const template = at(root, path);
  if (!isObject(template) || !isObject(template.spec))
    throw new WorkloadError(path, "a pod template (metadata and spec) is required");
  const { spec, request } = effectiveRequest(template.spec, defaults, [...path, "spec"]);
  const ready = { ...template, spec };
  setAt(root, path, ready);
  return { template: ready, request };
}

function setAt(root: Json, path: readonly PropertyKey[], value: unknown): void {
  const parent = at(root, path.slice(0, -1)) as Json;
  parent[path.at(-1) as string] = value;
}

/**
 * The object the agent creates for the workload of job `job`: the manifest as submitted (the
 * defaults written in), in the job's namespace, marked as the job's (a label and annotations,
 * also on every pod template, so that its controller's pods carry them) and with every pod
 * template handed to fleetq's scheduler.
 */
export function workloadObject(
  workload: Pick<Workload, "kind" | "manifest">,
  job: { id: string; name: string; queue: string; namespace: string },
): Json {
  const object = structuredClone(workload.manifest);
  const marks = { [JOB_ID_KEY]: job.id, [JOB_NAME_KEY]: job.name, [QUEUE_KEY]: job.queue };
  const metadata = isObject(object.metadata) ? object.metadata : {};
  for (const key of [
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "generation",
    "managedFields",
    "ownerReferences",
  ])
    delete metadata[key];
  object.metadata = {
    ...metadata,
    namespace: job.namespace,
    labels: { ...(isObject(metadata.labels) ? metadata.labels : {}), [JOB_ID_KEY]: labelValue(job.id) },
    annotations: { ...(isObject(metadata.annotations) ? metadata.annotations : {}), ...marks },
  };
  delete object.status;
  const def = kindNamed(workload.kind);
  const done = new Set<string>();
  for (const set of def.podSets(object)) {
    const key = JSON.stringify(set.templatePath);
    if (done.has(key)) continue;
    done.add(key);
    const template = at(object, set.templatePath) as Json;
    const meta = isObject(template.metadata) ? template.metadata : {};
    template.metadata = {
      ...meta,
      labels: { ...(isObject(meta.labels) ? meta.labels : {}), [JOB_ID_KEY]: labelValue(job.id) },
      annotations: {
        ...(isObject(meta.annotations) ? meta.annotations : {}),
        ...marks,
        ...def.templateMarks?.(object, set.name),
        ...(set.waves ? { [WAVES_KEY]: "true" } : {}),
        [WORKLOAD_KIND_KEY]: workload.kind,
      },
    };
    // No service-account token unless the template asks for one (its queue's policy allows it).
    template.spec = {
      automountServiceAccountToken: false,
      ...(template.spec as Json),
      schedulerName: SCHEDULER_NAME,
    };
  }
  return object;
}

/** Where a pod of a workload of this kind stands, from the labels its controller gave it. */
export function workloadSlot(
  kind: string,
  labels: Record<string, string>,
  annotations: Record<string, string>,
): WorkloadSlot | null {
  const def = KIND_BY_NAME.get(kind);
  const slot = def ? def.slotOf(labels, annotations) : null;
  // A pod of a later wave takes the place of any that finished, whatever its index.
  return slot && annotations[WAVES_KEY] === "true" ? { ...slot, index: null } : slot;
}

/** How many pods of each task must succeed for the workload to (more than the task's pods when
 * they run in waves). */
export function workloadCompletions(kind: WorkloadKindName, manifest: Json): Map<string, number> {
  return new Map(
    kindNamed(kind)
      .podSets(manifest)
      .map((set) => [set.name, set.completions]),
  );
}

/** The object's end, from its status conditions; null while it goes on. */
export function workloadOutcome(kind: WorkloadKindName, object: Json): WorkloadOutcome | null {
  return kindNamed(kind).outcome(object);
}

const KIND_BY_NAME = new Map<string, KindDefinition>(
  (["Job", "JobSet", "PyTorchJob", "MPIJob"] as const).map((k) => [k, kindNamed(k)]),
);
