// The pod groups an agent reports (PodGroupReport of schema.graphql): pods users created in the
// cluster for fleetq, one gang per `fleetq.io/pod-group` annotation. Checked field by field, then
// normalised into what reportPodGroups writes.
import { z } from "zod";
import { splitGpu } from "../domain/quantities.js";
import { clusterName, dnsLabel, labelInputs, queueName } from "./names.js";
import {
  DEFAULT_JOB_PRIORITY,
  MAX_PODS_PER_JOB,
  NON_PREEMPTIBLE_PRIORITY,
  resourcesInput,
} from "./submit-job.js";

/** A Kubernetes object name (DNS subdomain): pods, and the pod group annotation's value. */
const objectName = (what: string) =>
  z
    .string({ error: `${what} must be a string` })
    .min(1, `${what} must not be empty`)
    .max(253, `${what} must be at most 253 characters`)
    .regex(
      /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/,
      `${what} must be lowercase letters, digits, '-' and '.', starting and ending with a letter or digit`,
    );

const reportedPod = z
  .object({
    name: objectName("pod name"),
    uid: z.string().min(1, "uid must not be empty").max(128, "uid must be at most 128 characters").nullish(),
    resources: resourcesInput,
    gpuModel: z.string().min(1, "gpuModel must not be empty").nullish(),
    nodeSelector: labelInputs.nullish(),
  })
  .strict();

const podGroup = z
  .object({
    namespace: dnsLabel("namespace"),
    name: objectName("pod group name"),
    queue: queueName,
    minMember: z.int("minMember must be a whole number").min(1, "minMember must be at least 1").nullish(),
    priority: z
      .int("priority must be a whole number")
      .min(0, "priority must not be negative")
      .max(1_000_000, "priority must be at most 1000000")
      .nullish(),
    /** Empty: the group is gone from the cluster. */
    pods: z.array(reportedPod).max(MAX_PODS_PER_JOB, `a pod group may have at most ${MAX_PODS_PER_JOB} pods`),
  })
  .strict()
  .superRefine((g, ctx) => {
    const seen = new Set<string>();
    g.pods.forEach((p, i) => {
      if (seen.has(p.name))
        ctx.addIssue({
          code: "custom",
          path: ["pods", i, "name"],
          message: `pod "${p.name}" is reported twice`,
        });
      seen.add(p.name);
    });
  });

export const reportPodGroupsInputSchema = z
  .object({
    cluster: clusterName,
    groups: z.array(podGroup).max(1000, "at most 1000 pod groups per report"),
  })
  .strict()
  .superRefine((r, ctx) => {
    const seen = new Set<string>();
    r.groups.forEach((g, i) => {
      const key = `${g.namespace}/${g.name}`;
      if (seen.has(key))
        ctx.addIssue({
          code: "custom",
          path: ["groups", i, "name"],
          message: `pod group ${key} is reported twice`,
        });
      seen.add(key);
    });
  });

export type ReportPodGroupsInput = z.input<typeof reportPodGroupsInputSchema>;

/** What a pod asks for and where it may go: pods of one shape share a task. */
export interface PodShape {
  cpuMillis: number;
  memory: bigint;
  gpus: number;
  gpuFraction: number;
  gpuMemory: number;
  gpuModel: string | null;
  /** node label key In [value], sorted by key */
  nodeSelector: { key: string; values: string[] }[];
}

export interface ReportedPod {
  name: string;
  /** The pod's uid in the cluster; null when the agent does not send it. */
  uid: string | null;
  shape: PodShape;
}

/** A validated pod group with every default applied. */
export interface PodGroupSpec {
  namespace: string;
  name: string;
  queue: string;
  priority: number;
  preemptible: boolean;
  /** null: every pod of the group (the gang follows the group's size). */
  minMember: number | null;
  pods: ReportedPod[];
}

export function normalisePodGroups(r: z.output<typeof reportPodGroupsInputSchema>): PodGroupSpec[] {
  return r.groups.map((g) => {
    const priority = g.priority ?? DEFAULT_JOB_PRIORITY;
    return {
      namespace: g.namespace,
      name: g.name,
      queue: g.queue,
      priority,
      preemptible: priority < NON_PREEMPTIBLE_PRIORITY,
      minMember: g.minMember ?? null,
      pods: g.pods.map((p) => ({
        name: p.name,
        uid: p.uid ?? null,
        shape: {
          cpuMillis: p.resources.cpu ?? 0,
          memory: p.resources.memory ?? 0n,
          ...splitGpu(p.resources.gpu ?? 0),
          gpuMemory: p.resources.gpuMemory ?? 0,
          gpuModel: p.gpuModel ?? null,
          nodeSelector: (p.nodeSelector ?? [])
            .map((l) => ({ key: l.key, values: [l.value] }))
            .sort((a, b) => a.key.localeCompare(b.key)),
        },
      })),
    };
  });
}
