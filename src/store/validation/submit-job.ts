// The submitted job spec (SubmitJobInput of schema.graphql; also the CLI's YAML file): checked
// field by field with precise messages, then normalised into what the store writes.
import { z } from "zod";
import { splitGpu } from "../domain/quantities.js";
import { clusterName, dnsLabel, jobLabels, labelKey, labelMatches, queueName } from "./names.js";
import { bytes, cpuMillis, gpuMemoryMiB, INT4_MAX } from "./quantities.js";
import { DEFAULT_RESTART_BACKOFF_SECONDS, type RestartPolicy } from "../domain/gang-restart.js";
import { extendedResourcesInput, extendedResourcesRecord } from "./extended-resources.js";

/** A task's pod template is at most 256 KiB of JSON: agents fetch it once per job, and the
 * Kubernetes API server refuses objects far larger than that anyway (its configured request
 * size limit). */
export const MAX_TEMPLATE_BYTES = 256 * 1024;

const jsonSize = (value: unknown): number =>
  value == null ? 0 : Buffer.byteLength(JSON.stringify(value) ?? "", "utf8");

export const DEFAULT_JOB_PRIORITY = 50;
/** Jobs at or above this priority are not preemptible unless they say otherwise. */
export const NON_PREEMPTIBLE_PRIORITY = 100;
export const MAX_PODS_PER_JOB = 10_000;
/** Gang restarts a job may ask for. */
export const MAX_RESTARTS = 1000;
export const MAX_RESTART_BACKOFF_SECONDS = 86_400;
/** maxRuntimeSeconds and expectedRuntimeSeconds: at least a second, at most a year. */
export const MAX_RUNTIME_SECONDS = 365 * 86_400;

const runtimeSeconds = (field: string) =>
  z
    .int(`${field} must be a whole number of seconds`)
    .min(1, `${field} must be at least 1`)
    .max(MAX_RUNTIME_SECONDS, `${field} must be at most ${MAX_RUNTIME_SECONDS} (a year)`);

/** A pod's requests (TaskGroupInput.resources; also the pods of reported pod groups). */
export const resourcesInput = z
  .object({
    cpu: cpuMillis.nullish(),
    memory: bytes.nullish(),
    gpu: z
      .number("gpu must be a number")
      .min(0, "gpu must not be negative")
      .max(INT4_MAX, `gpu must be at most ${INT4_MAX} devices`)
      .refine(
        (g) => Number.isInteger(g) || g < 1,
        "gpu must be a whole number of devices, or a fraction below 1 of one device",
      )
      .nullish(),
    gpuMemory: gpuMemoryMiB.nullish(),
  })
  .strict()
  .superRefine((r, ctx) => {
    if ((r.gpu ?? 0) > 0 && (r.gpuMemory ?? 0) > 0) {
      ctx.addIssue({
        code: "custom",
        path: ["gpuMemory"],
        message: "ask for either gpu or gpuMemory, not both",
      });
    }
  });

const topology = z
  .object({ required: labelKey.nullish(), preferred: labelKey.nullish() })
  .strict()
  .refine(
    (t) => t.required || t.preferred,
    "topology needs a required or a preferred level (a node label key)",
  );

const task = z
  .object({
    name: dnsLabel("task name", 40),
    replicas: z
      .int("replicas must be a whole number")
      .min(1, "replicas must be at least 1")
      .max(MAX_PODS_PER_JOB, `replicas must be at most ${MAX_PODS_PER_JOB}`),
    resources: resourcesInput,
    subGroup: z.string().min(1, "subGroup must not be empty").nullish(),
    nodeSelector: labelMatches.nullish(),
    gpuModel: z.string().min(1, "gpuModel must not be empty").nullish(),
    template: z
      .unknown()
      .nullish()
      .refine((t) => jsonSize(t) <= MAX_TEMPLATE_BYTES, {
        message: `template must be at most ${MAX_TEMPLATE_BYTES} bytes of JSON (a Kubernetes pod template)`,
      }),
    durationSeconds: z
      .int("durationSeconds must be a whole number")
      .min(0, "durationSeconds must not be negative")
      .max(INT4_MAX, `durationSeconds must be at most ${INT4_MAX}`)
      .nullish(),
    exitFailure: z.boolean().nullish(),
    exitFailureAttempts: z
      .int("exitFailureAttempts must be a whole number")
      .min(0, "exitFailureAttempts must not be negative")
      .max(MAX_RESTARTS + 1, `exitFailureAttempts must be at most ${MAX_RESTARTS + 1}`)
      .nullish(),
    extendedResources: extendedResourcesInput.nullish(),
  })
  .strict();

const restartPolicy = z
  .object({
    maxRestarts: z
      .int("maxRestarts must be a whole number")
      .min(0, "maxRestarts must not be negative")
      .max(MAX_RESTARTS, `maxRestarts must be at most ${MAX_RESTARTS}`),
    backoffSeconds: z
      .int("backoffSeconds must be a whole number of seconds")
      .min(0, "backoffSeconds must not be negative")
      .max(
        MAX_RESTART_BACKOFF_SECONDS,
        `backoffSeconds must be at most ${MAX_RESTART_BACKOFF_SECONDS} (a day)`,
      )
      .nullish(),
    onExitCodes: z
      .array(
        z
          .int("an exit code is a whole number")
          .min(1, "an exit code that restarts is between 1 and 255 (0 is success)")
          .max(255, "an exit code that restarts is between 1 and 255"),
      )
      .min(1, "onExitCodes must name at least one exit code (leave it out to restart on any failure)")
      .max(64, "onExitCodes may name at most 64 exit codes")
      .refine((codes) => new Set(codes).size === codes.length, "onExitCodes names an exit code twice")
      .nullish(),
  })
  .strict();

const subGroup = z
  .object({
    name: dnsLabel("sub-group name", 40),
    // required on a leaf; ignored on a parent, which only groups others
    minMember: z.int("minMember must be a whole number").min(1, "minMember must be at least 1").nullish(),
    parent: z.string().min(1).nullish(),
    topology: topology.nullish(),
  })
  .strict();

// The fields a CI matrix's jobs differ in (checked on their own for a batch's repeated jobs).
const jobName = dnsLabel("job name");
const idempotencyKey = z
  .string()
  .min(1, "idempotencyKey must not be empty")
  .max(200, "idempotencyKey must be at most 200 characters")
  .nullish();
const labels = jobLabels.nullish();

/** The fields of a submission that say where and how a job runs, whatever describes its pods (a
 * job spec's tasks, or a Kubernetes manifest). */
export const placementFields = {
  namespace: dnsLabel("namespace").nullish(),
  cluster: clusterName.nullish(),
  clusterSelector: labelMatches.nullish(),
  priority: z
    .int("priority must be a whole number")
    .min(0, "priority must not be negative")
    .max(1_000_000, "priority must be at most 1000000")
    .nullish(),
  preemptible: z.boolean().nullish(),
  idempotencyKey,
  labels,
  maxRuntimeSeconds: runtimeSeconds("maxRuntimeSeconds").nullish(),
  expectedRuntimeSeconds: runtimeSeconds("expectedRuntimeSeconds").nullish(),
};

export const submitJobInputSchema = z
  .object({
    name: jobName,
    queue: queueName,
    ...placementFields,
    minMember: z.int("minMember must be a whole number").min(1, "minMember must be at least 1").nullish(),
    tasks: z.array(task).min(1, "a job needs at least one task").max(100, "a job may have at most 100 tasks"),
    subGroups: z.array(subGroup).max(100, "a job may have at most 100 sub-groups").nullish(),
    topology: topology.nullish(),
    restartPolicy: restartPolicy.nullish(),
    rendezvousPort: z
      .int("rendezvousPort must be a whole number")
      .min(1, "rendezvousPort must be a port number (1 to 65535)")
      .max(65_535, "rendezvousPort must be a port number (1 to 65535)")
      .nullish(),
  })
  .strict()
  .superRefine((j, ctx) => {
    const issue = (path: PropertyKey[], message: string) => ctx.addIssue({ code: "custom", path, message });
    if (
      j.maxRuntimeSeconds != null &&
      j.expectedRuntimeSeconds != null &&
      j.expectedRuntimeSeconds > j.maxRuntimeSeconds
    )
      issue(
        ["expectedRuntimeSeconds"],
        `expectedRuntimeSeconds (${j.expectedRuntimeSeconds}) exceeds maxRuntimeSeconds (${j.maxRuntimeSeconds})`,
      );
    if (j.cluster && j.clusterSelector?.length)
      issue(["clusterSelector"], "give either cluster or clusterSelector, not both");
    const taskNames = new Set<string>();
    j.tasks.forEach((t, i) => {
      if (taskNames.has(t.name)) issue(["tasks", i, "name"], `duplicate task name "${t.name}"`);
      taskNames.add(t.name);
      const r = t.resources;
      if (!r.cpu && !r.memory && !r.gpu && !r.gpuMemory)
        issue(["tasks", i, "resources"], "a pod must ask for some cpu, memory, gpu or gpuMemory");
    });
    const total = j.tasks.reduce((n, t) => n + t.replicas, 0);
    if (total > MAX_PODS_PER_JOB)
      issue(["tasks"], `a job may have at most ${MAX_PODS_PER_JOB} pods (has ${total})`);
    const groups = j.subGroups ?? [];
    if (!groups.length) {
      if (j.minMember != null && j.minMember > total)
        issue(["minMember"], `minMember (${j.minMember}) exceeds the number of pods (${total})`);
      j.tasks.forEach((t, i) => {
        if (t.subGroup)
          issue(["tasks", i, "subGroup"], `sub-group "${t.subGroup}" is not declared in subGroups`);
      });
      return;
    }
    if (j.minMember != null) issue(["minMember"], "with subGroups, set minMember on each sub-group instead");
    const byName = new Map<string, number>();
    groups.forEach((g, i) => {
      if (byName.has(g.name)) issue(["subGroups", i, "name"], `duplicate sub-group name "${g.name}"`);
      byName.set(g.name, i);
    });
    for (const [i, g] of groups.entries()) {
      if (g.parent == null) continue;
      if (!byName.has(g.parent)) {
        issue(["subGroups", i, "parent"], `parent sub-group "${g.parent}" is not declared`);
        continue;
      }
      const seen = new Set([g.name]);
      for (let p: string | null | undefined = g.parent; p != null; p = groups[byName.get(p)!]?.parent) {
        if (seen.has(p)) {
          issue(["subGroups", i, "parent"], `sub-group "${g.name}" is its own ancestor`);
          break;
        }
        seen.add(p);
      }
    }
    const parents = new Set(groups.map((g) => g.parent).filter((p) => p != null));
    const podsPerLeaf = new Map<string, number>();
    for (const [i, t] of j.tasks.entries()) {
      const problem = !t.subGroup
        ? "with subGroups, every task must name its sub-group"
        : !byName.has(t.subGroup)
          ? `sub-group "${t.subGroup}" is not declared in subGroups`
          : parents.has(t.subGroup)
            ? `sub-group "${t.subGroup}" groups other sub-groups; name a leaf`
            : null;
      if (problem) issue(["tasks", i, "subGroup"], problem);
      else podsPerLeaf.set(t.subGroup!, (podsPerLeaf.get(t.subGroup!) ?? 0) + t.replicas);
    }
    groups.forEach((g, i) => {
      if (parents.has(g.name)) return;
      if (g.minMember == null) {
        issue(["subGroups", i, "minMember"], `minMember is required on leaf sub-group "${g.name}"`);
        return;
      }
      const pods = podsPerLeaf.get(g.name) ?? 0;
      if (g.minMember > pods)
        issue(
          ["subGroups", i, "minMember"],
          `minMember (${g.minMember}) exceeds the pods of sub-group "${g.name}" (${pods})`,
        );
    });
  });

export type SubmitJobInput = z.input<typeof submitJobInputSchema>;
type Parsed = z.output<typeof submitJobInputSchema>;

export interface TopologyConstraint {
  required: string | null;
  preferred: string | null;
}

export interface TaskSpecRow {
  name: string;
  replicas: number;
  cpuMillis: number;
  memory: bigint;
  gpus: number;
  gpuFraction: number;
  gpuMemory: number;
  subGroup: string | null;
  nodeSelector: { key: string; values: string[] }[];
  gpuModel: string | null;
  template: unknown;
  durationSeconds: number | null;
  exitFailure: boolean;
  /** Simulated clusters: the pods of attempts 1..exitFailureAttempts end Failed. */
  exitFailureAttempts: number;
  /** {name: count} per pod of extended resources beyond nvidia.com/gpu, names in order. */
  extendedResources: Record<string, number>;
}

export interface SubGroupRow {
  name: string;
  minMember: number;
  parent: string | null;
  topology: TopologyConstraint | null;
}

/** A spec's namespace when its input names none: the queue's first namespace, filled in against
 * the queue's policy (withQueueNamespace) before the spec is checked and stored. */
export const QUEUE_NAMESPACE = "";

/** A validated job spec with every default applied. */
export interface JobSpec {
  name: string;
  namespace: string;
  queue: string;
  cluster: string | null;
  clusterSelector: { key: string; values: string[] }[];
  priority: number;
  preemptible: boolean;
  /** The gang minimum of the whole job (with sub-groups: the sum over leaf sub-groups). */
  minMember: number;
  tasks: TaskSpecRow[];
  subGroups: SubGroupRow[];
  topology: TopologyConstraint | null;
  idempotencyKey: string | null;
  /** key → value, keys in code-unit order. */
  labels: Record<string, string>;
  maxRuntimeSeconds: number | null;
  expectedRuntimeSeconds: number | null;
  restartPolicy: RestartPolicy | null;
  rendezvousPort: number | null;
  /** A Kubernetes workload its cluster's agent creates (submitWorkload); null = fleetq's own pods. */
  workload: StoredWorkload | null;
}

/** A workload as the job keeps it: the object to create, fleetq's marks not yet added. */
export interface StoredWorkload {
  kind: string;
  apiVersion: string;
  name: string;
  manifest: Record<string, unknown>;
}

const topologyRow = (t: { required?: string | null; preferred?: string | null } | null | undefined) =>
  t ? { required: t.required ?? null, preferred: t.preferred ?? null } : null;

/** key → value, keys in code-unit order. */
const labelsRecord = (
  list: readonly { key: string; value: string }[] | null | undefined,
): Record<string, string> =>
  Object.fromEntries(
    (list ?? []).map((l) => [l.key, l.value] as const).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );

/** The input without name, idempotencyKey and labels, as text that differs whenever the input
 * could check differently; null for what it cannot say that of (anything but plain objects,
 * arrays, strings, finite numbers, booleans and null; an undefined anywhere). */
function restKey(input: unknown): string | null {
  if (input === null || typeof input !== "object" || Array.isArray(input)) return null;
  const proto = Object.getPrototypeOf(input);
  if (proto !== Object.prototype && proto !== null) return null;
  const { name: _name, idempotencyKey: _key, labels: _labels, ...rest } = input as Record<string, unknown>;
  let plain = true;
  try {
    const text = JSON.stringify(rest, (_k, v: unknown) => {
      if (v === undefined || (typeof v === "number" && !Number.isFinite(v))) plain = false;
      else if (typeof v === "object" && v !== null && !Array.isArray(v)) {
        const proto = Object.getPrototypeOf(v);
        if (proto !== Object.prototype && proto !== null) plain = false;
      }
      return v;
    });
    return plain ? text : null;
  } catch {
    return null; // a bigint, a cycle
  }
}

/**
 * A checker for the inputs of one batch: an input that differs from an earlier accepted one only
 * in name, idempotencyKey and labels (a CI matrix) has only those checked, and takes the rest of
 * that input's spec (none of the other checks look at them). Anything else, and any input whose
 * own fields fail, goes through `parse` whole, so a refusal is exactly the one it gives.
 */
export function batchSpecParser(
  parse: (input: SubmitJobInput) => JobSpec,
): (input: SubmitJobInput) => JobSpec {
  const accepted = new Map<string, JobSpec>();
  return (input) => {
    const key = restKey(input);
    const like = key === null ? undefined : accepted.get(key);
    if (like) {
      const name = jobName.safeParse(input.name);
      const idem = idempotencyKey.safeParse(input.idempotencyKey);
      const list = labels.safeParse(input.labels);
      if (name.success && idem.success && list.success)
        return {
          ...like,
          name: name.data,
          idempotencyKey: idem.data ?? null,
          labels: labelsRecord(list.data),
        };
    }
    const spec = parse(input);
    if (key !== null && !like) accepted.set(key, spec);
    return spec;
  };
}

export function normaliseJobSpec(j: Parsed): JobSpec {
  const priority = j.priority ?? DEFAULT_JOB_PRIORITY;
  const subGroups: SubGroupRow[] = (j.subGroups ?? []).map((g) => ({
    name: g.name,
    // a leaf's is required (the schema's check); a parent's is ignored, 0 when not given
    minMember: g.minMember ?? 0,
    parent: g.parent ?? null,
    topology: topologyRow(g.topology),
  }));
  const parents = new Set(subGroups.map((g) => g.parent));
  const totalPods = j.tasks.reduce((n, t) => n + t.replicas, 0);
  const minMember = subGroups.length
    ? subGroups.filter((g) => !parents.has(g.name)).reduce((n, g) => n + g.minMember, 0)
    : (j.minMember ?? totalPods);
  return {
    name: j.name,
    namespace: j.namespace ?? QUEUE_NAMESPACE,
    queue: j.queue,
    cluster: j.cluster ?? null,
    clusterSelector: j.clusterSelector ?? [],
    priority,
    preemptible: j.preemptible ?? priority < NON_PREEMPTIBLE_PRIORITY,
    minMember,
    tasks: j.tasks.map((t) => ({
      name: t.name,
      replicas: t.replicas,
      cpuMillis: t.resources.cpu ?? 0,
      memory: t.resources.memory ?? 0n,
      ...splitGpu(t.resources.gpu ?? 0),
      gpuMemory: t.resources.gpuMemory ?? 0,
      subGroup: t.subGroup ?? null,
      nodeSelector: t.nodeSelector ?? [],
      gpuModel: t.gpuModel ?? null,
      template: t.template ?? null,
      durationSeconds: t.durationSeconds ?? null,
      exitFailure: t.exitFailure ?? false,
      exitFailureAttempts: t.exitFailureAttempts ?? 0,
      extendedResources: extendedResourcesRecord(t.extendedResources),
    })),
    subGroups,
    topology: topologyRow(j.topology),
    idempotencyKey: j.idempotencyKey ?? null,
    labels: labelsRecord(j.labels),
    maxRuntimeSeconds: j.maxRuntimeSeconds ?? null,
    expectedRuntimeSeconds: j.expectedRuntimeSeconds ?? null,
    restartPolicy: j.restartPolicy
      ? {
          maxRestarts: j.restartPolicy.maxRestarts,
          backoffSeconds: j.restartPolicy.backoffSeconds ?? DEFAULT_RESTART_BACKOFF_SECONDS,
          onExitCodes: j.restartPolicy.onExitCodes
            ? [...j.restartPolicy.onExitCodes].sort((a, b) => a - b)
            : null,
        }
      : null,
    rendezvousPort: j.rendezvousPort ?? null,
    workload: null,
  };
}
