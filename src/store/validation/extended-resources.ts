// What a task may take of a cluster beyond cpu, memory and nvidia.com/gpu: the extended resources
// it declares (amd.com/gpu, nvidia.com/mig-1g.10gb, hugepages-2Mi…), each needing the cluster's
// leave, and dynamic resource claims, which fleetq does not count at all.
import { z } from "zod";
import { isObject, list, obj, type Path, podView } from "./pod-security/template.js";
import { type ClusterPodPolicy, EXTENDED_RESOURCE_NAME } from "./pod-policy.js";
import { NATIVE_RESOURCES } from "../../protocol/pod-resources.js";
import { parseQuantity } from "../../protocol/quantity.js";

/** A stored JobTask.extendedResources ({name: count}; anything else: none). */
export function extendedResourcesOf(stored: unknown): Record<string, number> {
  if (!isObject(stored)) return {};
  return Object.fromEntries(
    Object.entries(stored).filter((e): e is [string, number] => typeof e[1] === "number" && e[1] > 0),
  );
}

/** TaskGroupInput.extendedResources: [{name, quantity}], a quantity per pod ("2", "1Gi"). */
export const extendedResourcesInput = z
  .array(
    z
      .object({
        name: z
          .string("name is an extended resource's name")
          .max(253, "name is at most 253 characters")
          .regex(
            EXTENDED_RESOURCE_NAME,
            "name must be an extended resource: a domain-qualified name (amd.com/gpu) or hugepages-<size>",
          )
          .refine(
            (n) => !NATIVE_RESOURCES.has(n),
            "name must be an extended resource (cpu, memory and nvidia.com/gpu go in resources)",
          ),
        quantity: z.union([z.string(), z.number()]).transform((q, ctx) => {
          let n: number;
          try {
            n = parseQuantity(q);
          } catch {
            n = Number.NaN;
          }
          if (!Number.isSafeInteger(n) || n <= 0) {
            ctx.addIssue({
              code: "custom",
              message: 'quantity must be a positive whole quantity ("2", "1Gi")',
            });
            return z.NEVER;
          }
          return n;
        }),
      })
      .strict(),
  )
  .max(32, "a task may declare at most 32 extended resources")
  .superRefine((l, ctx) => {
    const seen = new Set<string>();
    l.forEach((r, i) => {
      if (seen.has(r.name))
        ctx.addIssue({ code: "custom", path: [i, "name"], message: `${r.name} is declared twice` });
      seen.add(r.name);
    });
  });

/** The declared list as stored: {name: count}, names in code-unit order. */
export const extendedResourcesRecord = (
  l: readonly { name: string; quantity: number }[] | null | undefined,
): Record<string, number> =>
  Object.fromEntries(
    (l ?? []).map((r) => [r.name, r.quantity] as const).sort(([a], [b]) => (a < b ? -1 : 1)),
  );

interface TaskAsk {
  template: unknown;
  extendedResources: Readonly<Record<string, number>>;
}

/** What the cluster's pod policy refuses of a task: an extended resource it does not allow, or a
 * resource claim when it allows none. Paths are inside the task. */
export function clusterResourceViolation(
  task: TaskAsk,
  cluster: ClusterPodPolicy,
): { path: PropertyKey[]; message: string } | null {
  for (const name of Object.keys(task.extendedResources))
    if (!cluster.extendedResources.includes(name))
      return {
        path: ["extendedResources", name],
        message: `${name} is not allowed on this cluster (its pod policy allows ${cluster.extendedResources.length ? cluster.extendedResources.join(", ") : "no extended resources"})`,
      };
  if (cluster.resourceClaims) return null;
  const claim = resourceClaimPath(task.template);
  return claim
    ? {
        path: ["template", ...claim],
        message: "resource claims are not allowed on this cluster (its pod policy allows none)",
      }
    : null;
}

/** The first resource claim of a template: the pod's resourceClaims, or a container's
 * resources.claims. Null when it has none. */
export function resourceClaimPath(template: unknown): Path | null {
  const pod = template === null || template === undefined ? null : podView(template);
  if (!pod) return null;
  if (list(pod.spec.resourceClaims).length) return [...pod.specPath, "resourceClaims"];
  if (isObject(pod.spec.resources) && list(pod.spec.resources.claims).length)
    return [...pod.specPath, "resources", "claims"];
  for (const c of pod.containers)
    if (list(obj(c.container.resources).claims).length) return [...c.path, "resources", "claims"];
  return null;
}

/** What a job's pods need of a cluster's pod policy (admission's filter). */
export interface PodNeeds {
  /** Extended resources its tasks declare, in name order. */
  extendedResources: string[];
  resourceClaims: boolean;
}

/** A job's needs from its task rows. */
export function podNeedsOf(tasks: readonly { template: unknown; extendedResources: unknown }[]): PodNeeds {
  const names = new Set(tasks.flatMap((t) => Object.keys(extendedResourcesOf(t.extendedResources))));
  return {
    extendedResources: [...names].sort(),
    resourceClaims: tasks.some((t) => resourceClaimPath(t.template) !== null),
  };
}

/** Why the cluster's pod policy refuses a job with these needs, or null when it takes it. */
export function podPolicyRefusal(cluster: ClusterPodPolicy, needs: PodNeeds): string | null {
  const missing = needs.extendedResources.filter((n) => !cluster.extendedResources.includes(n));
  if (missing.length) return `its pod policy does not allow ${missing.join(", ")}`;
  if (needs.resourceClaims && !cluster.resourceClaims) return "its pod policy does not allow resource claims";
  return null;
}
