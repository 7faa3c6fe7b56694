// What a cluster lets pods ask of it beyond cpu, memory and nvidia.com/gpu (Cluster.podPolicy),
// and what a queue lets pods name that the Pod Security Standards leave open (Queue.podPolicy):
// their shapes, their parsing from stored JSON and their input schemas.
import { z } from "zod";

/** A cluster's pod policy: the extended resources its pods may ask for (each declared by the
 * task) and whether they may use dynamic resource claims. Unset = nothing beyond. */
export interface ClusterPodPolicy {
  extendedResources: readonly string[];
  resourceClaims: boolean;
}

export const NO_CLUSTER_POD_POLICY: ClusterPodPolicy = { extendedResources: [], resourceClaims: false };

const strings = (v: unknown): string[] | null =>
  Array.isArray(v) && v.every((s) => typeof s === "string") ? [...v] : null;

/** A stored Cluster.podPolicy (null or malformed: nothing beyond). */
export function clusterPodPolicyOf(stored: unknown): ClusterPodPolicy {
  if (stored === null || typeof stored !== "object" || Array.isArray(stored)) return NO_CLUSTER_POD_POLICY;
  const v = stored as Record<string, unknown>;
  return { extendedResources: strings(v.extendedResources) ?? [], resourceClaims: v.resourceClaims === true };
}

/** A queue's own allow-lists; null = the parent's. */
export interface QueuePodPolicyRow {
  serviceAccounts: readonly string[] | null;
  runtimeClasses: readonly string[] | null;
  priorityClasses: readonly string[] | null;
  /** Whether pods may mount a service-account token (automount or a projected token). */
  serviceAccountToken: boolean | null;
}

/** A queue's effective allow-lists (its own, else the nearest ancestor's, else the defaults). */
export interface QueuePodPolicy {
  serviceAccounts: readonly string[];
  runtimeClasses: readonly string[];
  priorityClasses: readonly string[];
  serviceAccountToken: boolean;
}

/** At the top of the tree: the namespace's default service account, no runtime or priority
 * class, no service-account token. */
export const DEFAULT_QUEUE_POD_POLICY: QueuePodPolicy = {
  serviceAccounts: ["default"],
  runtimeClasses: [],
  priorityClasses: [],
  serviceAccountToken: false,
};

export const QUEUE_POD_POLICY_FIELDS = [
  "serviceAccounts",
  "runtimeClasses",
  "priorityClasses",
  "serviceAccountToken",
] as const;

/** A stored Queue.podPolicy (null, or a field missing or malformed: inherited). */
export function queuePodPolicyRowOf(stored: unknown): QueuePodPolicyRow {
  const v =
    stored !== null && typeof stored === "object" && !Array.isArray(stored)
      ? (stored as Record<string, unknown>)
      : {};
  return {
    serviceAccounts: strings(v.serviceAccounts),
    runtimeClasses: strings(v.runtimeClasses),
    priorityClasses: strings(v.priorityClasses),
    serviceAccountToken: typeof v.serviceAccountToken === "boolean" ? v.serviceAccountToken : null,
  };
}

/** The effective allow-lists from a queue's own and its ancestors' rows, nearest first. */
export function effectiveQueuePodPolicy(pathToRoot: readonly QueuePodPolicyRow[]): QueuePodPolicy {
  const pick = <K extends (typeof QUEUE_POD_POLICY_FIELDS)[number]>(key: K): QueuePodPolicy[K] =>
    (pathToRoot.map((r) => r[key]).find((v) => v !== null) as QueuePodPolicy[K] | undefined) ??
    DEFAULT_QUEUE_POD_POLICY[key];
  return {
    serviceAccounts: pick("serviceAccounts"),
    runtimeClasses: pick("runtimeClasses"),
    priorityClasses: pick("priorityClasses"),
    serviceAccountToken: pick("serviceAccountToken"),
  };
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

const objectNames = (what: string) =>
  z
    .array(
      z
        .string(`a ${what} is a name`)
        .max(253, `a ${what} name is at most 253 characters`)
        .regex(DNS_SUBDOMAIN, `a ${what} name is a DNS subdomain (lowercase letters, digits, '-' and '.')`),
    )
    .max(100, `at most 100 ${what}s`)
    .refine((l) => new Set(l).size === l.length, `a ${what} is named twice`);

/** Queue input's podPolicy: each field omitted or null inherits the parent's; [] allows none. */
export const queuePodPolicyInput = z
  .object({
    serviceAccounts: objectNames("service account").nullish(),
    runtimeClasses: objectNames("runtime class").nullish(),
    priorityClasses: objectNames("priority class").nullish(),
    serviceAccountToken: z.boolean("serviceAccountToken must be true or false").nullish(),
  })
  .strict();

/** The stored form of a queue's allow-lists: only the fields it sets. */
export function storedQueuePodPolicy(
  input: z.output<typeof queuePodPolicyInput>,
): Record<string, string[] | boolean> {
  return Object.fromEntries(
    QUEUE_POD_POLICY_FIELDS.flatMap((k) =>
      input[k] === null || input[k] === undefined ? [] : [[k, input[k]]],
    ),
  );
}

/** An extended resource's name as Kubernetes spells it: a DNS-subdomain prefix and a name
 * (`amd.com/gpu`, `nvidia.com/mig-1g.10gb`, `rdma/hca`) or `hugepages-<size>`. */
export const EXTENDED_RESOURCE_NAME =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?|hugepages-[0-9]+(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?)$/;

/** The stored form of a cluster's pod policy. */
export const storedClusterPodPolicy = (
  input: z.output<typeof clusterPodPolicyInput>,
): { extendedResources: string[]; resourceClaims: boolean } => ({
  extendedResources: [...new Set(input.extendedResources ?? [])].sort(),
  resourceClaims: input.resourceClaims ?? false,
});

/** Cluster input's podPolicy. */
export const clusterPodPolicyInput = z
  .object({
    extendedResources: z
      .array(
        z
          .string("an extended resource is a name")
          .max(253, "an extended resource name is at most 253 characters")
          .regex(
            EXTENDED_RESOURCE_NAME,
            "an extended resource is a domain-qualified name (amd.com/gpu) or hugepages-<size>",
          ),
      )
      .max(100, "at most 100 extended resources")
      .nullish(),
    resourceClaims: z.boolean("resourceClaims must be true or false").nullish(),
  })
  .strict();
