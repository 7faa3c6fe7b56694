// A pod found under the name the agent was about to create it with, that the agent cannot prove
// its own (no seal of its, not created in this run): bound only if it is exactly the pod the agent
// would have made — else someone made it in advance (e.g. asking for 8 GPUs where the task
// declared 1) and the bind fails, naming what differs. An agent that stopped between creating a
// pod and binding it finds its own pod equal, and binds it.
import type { V1Container, V1Pod } from "@kubernetes/client-node";
import { parseQuantity } from "../../quantity.js";

type Json = Record<string, unknown>;

/** The fields of `existing` that differ from what the agent would create (empty: the same). */
export function podDifferences(existing: V1Pod, manifest: V1Pod, node: string): string[] {
  const found: string[] = [];
  const a = existing.spec;
  const b = manifest.spec;
  if (!a || !b) return ["spec"];
  if (a.nodeName && a.nodeName !== node) found.push("spec.nodeName");
  const fields = [
    "schedulerName",
    "hostNetwork",
    "hostPID",
    "hostIPC",
    "runtimeClassName",
    "priorityClassName",
    "nodeSelector",
    "affinity",
    "securityContext",
    "volumes",
    "hostname",
    "subdomain",
  ] as const;
  for (const f of fields) if (!same(a[f], b[f])) found.push(`spec.${f}`);
  if ((a.serviceAccountName ?? "default") !== (b.serviceAccountName ?? "default"))
    found.push("spec.serviceAccountName");
  found.push(...containerDifferences("containers", a.containers, b.containers));
  found.push(...containerDifferences("initContainers", a.initContainers ?? [], b.initContainers ?? []));
  return found;
}

function containerDifferences(path: string, found: V1Container[], wanted: V1Container[]): string[] {
  if (found.length !== wanted.length) return [`spec.${path}`];
  const out: string[] = [];
  wanted.forEach((w, i) => {
    const f = found[i]!;
    const at = `spec.${path}[${i}]`;
    for (const key of [
      "name",
      "image",
      "command",
      "args",
      "env",
      "envFrom",
      "securityContext",
      "volumeMounts",
    ] as const)
      if (!same(f[key], w[key])) out.push(`${at}.${key}`);
    for (const kind of ["requests", "limits"] as const)
      if (!sameQuantities(f.resources?.[kind], w.resources?.[kind])) out.push(`${at}.resources.${kind}`);
  });
  return out;
}

/** The API server writes quantities canonically (1024Mi is 1Gi): compared by value. */
function sameQuantities(
  a: Record<string, string> | undefined,
  b: Record<string, string> | undefined,
): boolean {
  const keys = new Set([...Object.keys(a ?? {}), ...Object.keys(b ?? {})]);
  for (const key of keys) {
    const x = a?.[key];
    const y = b?.[key];
    if (x === undefined || y === undefined) return false;
    try {
      if (parseQuantity(x) !== parseQuantity(y)) return false;
    } catch {
      if (x !== y) return false;
    }
  }
  return true;
}

/** Deep equality of JSON values, an absent field equal to an empty one. */
function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(normal(a)) === JSON.stringify(normal(b));
}

function normal(value: unknown): unknown {
  if (Array.isArray(value)) return value.length ? value.map(normal) : undefined;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Json)
      .map(([k, v]) => [k, normal(v)] as const)
      .filter(([, v]) => v !== undefined)
      .sort(([x], [y]) => (x < y ? -1 : 1));
    return entries.length ? Object.fromEntries(entries) : undefined;
  }
  return value === false || value === "" ? undefined : value;
}
