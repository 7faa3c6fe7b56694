// A Kubernetes manifest submitted as a job (SubmitWorkloadInput of schema.graphql): the workload's
// pod sets become the job's tasks (src/workload), checked as a submitted job spec is, with every
// error naming the field of the manifest it is about (`manifest.spec.pytorchReplicaSpecs.Worker.
// template.spec.containers[0].securityContext.privileged`).
import { z } from "zod";
import {
  checkKind,
  deriveWorkload,
  QUEUE_LABELS,
  type Workload,
  WorkloadError,
} from "../../workload/index.js";
import type { QueuePolicy } from "../domain/queue-policy.js";
import { FLEET_DEFAULT_REQUEST } from "../domain/queue-policy.js";
import { ForbiddenError, InvalidInputError } from "../errors.js";
import { queueName } from "./names.js";
import { formatPath, invalidAt, parseInput } from "./parse.js";
import { type JobSpec, normaliseJobSpec, placementFields, submitJobInputSchema } from "./submit-job.js";
import { jobPolicyError, withQueueNamespace } from "./job-policy.js";
import type { ClusterPodPolicy } from "./pod-policy.js";
import { templateResourceError } from "./template-resources.js";
import { INT4_MAX } from "./quantities.js";

export const submitWorkloadInputSchema = z
  .object({
    manifest: z.unknown(),
    queue: queueName.nullish(),
    ...placementFields,
    durationSeconds: z.int("durationSeconds must be a whole number").min(0).max(INT4_MAX).nullish(),
  })
  .strict();

export type SubmitWorkloadInput = z.input<typeof submitWorkloadInputSchema>;
type Parsed = z.output<typeof submitWorkloadInputSchema>;

/** The queue a workload names (for the caller's access check), or null when it names none. */
export function workloadQueueOf(input: SubmitWorkloadInput): string | null {
  try {
    return workloadQueue(input);
  } catch {
    return null;
  }
}

/** The queue a workload goes to: the input's, else its manifest's label (fleetq's, then Kueue's).
 * A manifest of a kind fleetq does not take is refused first: the queue would not help it. */
export function workloadQueue(input: SubmitWorkloadInput): string {
  try {
    checkKind(input.manifest);
  } catch (e) {
    throw manifestAt(e);
  }
  if (input.queue) return input.queue;
  const labels = (input.manifest as { metadata?: { labels?: Record<string, unknown> } } | null)?.metadata
    ?.labels;
  for (const key of QUEUE_LABELS) {
    const value = labels?.[key];
    if (typeof value === "string" && value) return value;
  }
  throw invalidAt(
    ["queue"],
    `no queue: give one (fleetq submit --queue), or label the manifest ${QUEUE_LABELS.join(" or ")}`,
  );
}

/**
 * The job spec of a workload, checked against its queue's policy (`policy` null: the queue does
 * not exist, which the insert refuses) and the pod policy of the cluster it names (`cluster`). Errors name fields of the input: `manifest.…` for what
 * comes from the manifest.
 */
export function workloadJobSpec(
  input: SubmitWorkloadInput,
  policy: QueuePolicy | null,
  cluster?: ClusterPodPolicy,
): JobSpec {
  const r: Parsed = parseInput(submitWorkloadInputSchema, input);
  const queue = workloadQueue(r);
  let workload: Workload;
  try {
    workload = deriveWorkload(r.manifest, policy?.defaultRequest ?? FLEET_DEFAULT_REQUEST);
  } catch (e) {
    throw manifestAt(e);
  }
  if (r.namespace && workload.namespace && r.namespace !== workload.namespace)
    throw invalidAt(
      ["namespace"],
      `namespace "${r.namespace}" differs from the manifest's metadata.namespace "${workload.namespace}"`,
    );
  const namespaceFrom = r.namespace ? ["namespace"] : ["manifest", "metadata", "namespace"];
  const job = {
    name: workload.name,
    queue,
    namespace: r.namespace ?? workload.namespace,
    cluster: r.cluster,
    clusterSelector: r.clusterSelector,
    priority: r.priority,
    preemptible: r.preemptible,
    minMember: workload.minMember,
    idempotencyKey: r.idempotencyKey,
    labels: r.labels,
    maxRuntimeSeconds: r.maxRuntimeSeconds,
    expectedRuntimeSeconds: r.expectedRuntimeSeconds,
    tasks: workload.tasks.map((t) => ({
      name: t.name,
      replicas: t.replicas,
      resources: { cpu: t.resources.cpuMillis, memory: String(t.resources.memory), gpu: t.resources.gpus },
      ...(t.nodeSelector.length ? { nodeSelector: t.nodeSelector } : {}),
      gpuModel: t.gpuModel,
      template: t.template,
      durationSeconds: r.durationSeconds ?? workload.simulatedDurationSeconds,
    })),
  };
  const inManifest = (e: unknown) => manifestError(e, workload, namespaceFrom);
  let spec: JobSpec;
  try {
    spec = normaliseJobSpec(parseInput(submitJobInputSchema, job));
    const over = templateResourceError(spec);
    if (over) throw over;
    if (policy) spec = withQueueNamespace(spec, policy);
    const refused = policy && jobPolicyError(spec, policy, cluster);
    if (refused) throw refused;
  } catch (e) {
    throw inManifest(e);
  }
  return {
    ...spec,
    workload: {
      kind: workload.kind,
      apiVersion: workload.apiVersion,
      name: workload.name,
      manifest: workload.manifest,
    },
  };
}

/** A refusal of the manifest as one of the input's field `manifest.…`. */
function manifestAt(e: unknown): unknown {
  return e instanceof WorkloadError ? invalidAt(["manifest", ...e.path], e.message) : e;
}

/** An error about the derived job spec as one about the input it came from. */
function manifestError(e: unknown, workload: Workload, namespaceFrom: readonly PropertyKey[]): unknown {
  if (!(e instanceof InvalidInputError) && !(e instanceof ForbiddenError)) return e;
  const field = e.field ?? "";
  const task = /^tasks\[(\d+)\](?:\.template)?(.*)$/.exec(field);
  let path: string | null = null;
  if (task) path = `manifest.${formatPath(workload.tasks[Number(task[1])]!.templatePath)}${task[2] ?? ""}`;
  else if (field === "namespace") path = formatPath(namespaceFrom);
  else if (field === "name") path = "manifest.metadata.name";
  else if (field === "minMember") path = "manifest.spec";
  if (path === null) return e;
  const message = e.message.startsWith(`${field}: `) ? e.message.slice(field.length + 2) : e.message;
  return e instanceof ForbiddenError
    ? new ForbiddenError(message, path)
    : new InvalidInputError(path, `${path}: ${message}`);
}
