// Pod fields the Pod Security Standards leave open, held to the queue's allow-lists: the service
// account a pod runs as (and whether it gets that account's token), its runtime class, its priority
// class; and the label and annotation keys under fleetq.io, which are the agent's to write (a
// template writing them could pass its pods off as another job's).
import type { QueuePodPolicy } from "./pod-policy.js";
import { isObject, list, obj, type Path, podView } from "./pod-security/template.js";

export interface FieldViolation {
  path: Path;
  message: string;
}

const allowedText = (names: readonly string[]): string =>
  names.length ? `allowed: ${names.join(", ")}` : "the queue allows none";

/** A label or annotation key fleetq's own prefix (fleetq.io/, or a subdomain of it). */
export const isFleetqKey = (key: string): boolean => {
  const slash = key.indexOf("/");
  if (slash < 0) return false;
  const prefix = key.slice(0, slash).toLowerCase();
  return prefix === "fleetq.io" || prefix.endsWith(".fleetq.io");
};

/** The first field of the template the queue's allow-lists refuse, or null. */
export function podFieldsViolation(template: unknown, policy: QueuePodPolicy): FieldViolation | null {
  if (template === null || template === undefined) return null;
  const pod = podView(template);
  if (!pod) return null; // the pod security check names a template that is no object
  const { spec, specPath } = pod;
  return (
    fleetqMarks(pod.metadata, pod.metadataPath) ??
    serviceAccount(spec, specPath, policy) ??
    named(spec, specPath, "runtimeClassName", "runtime class", policy.runtimeClasses) ??
    named(spec, specPath, "priorityClassName", "priority class", policy.priorityClasses) ??
    serviceAccountToken(spec, specPath, policy)
  );
}

function fleetqMarks(metadata: Record<string, unknown>, path: Path): FieldViolation | null {
  for (const field of ["labels", "annotations"] as const) {
    const key = Object.keys(obj(metadata[field])).find(isFleetqKey);
    if (key !== undefined)
      return {
        path: [...path, field, key],
        message: `${field} under fleetq.io/ are fleetq's own (the agent writes them); use another prefix`,
      };
  }
  return null;
}

/** The account the pod runs as: serviceAccountName, else its deprecated alias serviceAccount,
 * else the namespace's "default" (as Kubernetes fills it in). Both fields are checked. */
function serviceAccount(spec: Record<string, unknown>, specPath: Path, policy: QueuePodPolicy) {
  const allowed = policy.serviceAccounts;
  for (const field of ["serviceAccountName", "serviceAccount"] as const) {
    const v = spec[field];
    if (v === undefined || v === null || v === "") continue;
    if (typeof v !== "string" || !allowed.includes(v))
      return {
        path: [...specPath, field],
        message: `service account ${JSON.stringify(v)} is not allowed (${allowedText(allowed)})`,
      };
  }
  const set = [spec.serviceAccountName, spec.serviceAccount].some((v) => typeof v === "string" && v !== "");
  if (!set && !allowed.includes("default"))
    return {
      path: [...specPath, "serviceAccountName"],
      message: `the pod would run as service account "default", which is not allowed (${allowedText(allowed)}); name one`,
    };
  return null;
}

function named(
  spec: Record<string, unknown>,
  specPath: Path,
  field: string,
  what: string,
  allowed: readonly string[],
): FieldViolation | null {
  const v = spec[field];
  if (v === undefined || v === null || v === "") return null;
  return typeof v === "string" && allowed.includes(v)
    ? null
    : {
        path: [...specPath, field],
        message: `${what} ${JSON.stringify(v)} is not allowed (${allowedText(allowed)})`,
      };
}

/** A service-account token reaches a pod by automounting or by a projected volume: both need the
 * queue's leave (the agent writes automountServiceAccountToken: false where a template sets none). */
function serviceAccountToken(
  spec: Record<string, unknown>,
  specPath: Path,
  policy: QueuePodPolicy,
): FieldViolation | null {
  if (policy.serviceAccountToken) return null;
  const refusal = "service-account tokens are not allowed in this queue's pods";
  if (spec.automountServiceAccountToken === true)
    return { path: [...specPath, "automountServiceAccountToken"], message: refusal };
  for (const [i, volume] of list(spec.volumes).entries()) {
    const sources = list(obj(obj(volume).projected).sources);
    const j = sources.findIndex((s) => isObject(s) && s.serviceAccountToken != null);
    if (j >= 0)
      return {
        path: [...specPath, "volumes", i, "projected", "sources", j, "serviceAccountToken"],
        message: refusal,
      };
  }
  return null;
}
