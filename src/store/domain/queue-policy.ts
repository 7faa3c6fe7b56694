// What a queue's jobs may ask of a cluster: the namespaces their pods may run in and the pod
// security level their templates are held to. Each queue may set either; an unset one is the
// parent's, and at the top of the tree the defaults below.
import { DEFAULT_POD_SECURITY, type PodSecurityLevel } from "../validation/pod-security/index.js";

export const DEFAULT_NAMESPACES: readonly string[] = ["default"];

export interface QueuePolicy {
  namespaces: readonly string[];
  podSecurity: PodSecurityLevel;
}

/** One queue's own settings: `namespaces` [] and `podSecurity` null inherit. */
export interface QueuePolicyRow {
  name: string;
  parentName: string | null;
  namespaces: readonly string[];
  podSecurity: PodSecurityLevel | null;
}

/** The effective policy from a queue's own row and its ancestors', nearest first. */
export function effectivePolicy(pathToRoot: readonly QueuePolicyRow[]): QueuePolicy {
  return {
    namespaces: pathToRoot.find((q) => q.namespaces.length > 0)?.namespaces ?? DEFAULT_NAMESPACES,
    podSecurity: pathToRoot.find((q) => q.podSecurity !== null)?.podSecurity ?? DEFAULT_POD_SECURITY,
  };
}

/** Every queue's effective policy from all the queue rows. */
export function effectivePolicies(rows: readonly QueuePolicyRow[]): Map<string, QueuePolicy> {
  const byName = new Map(rows.map((r) => [r.name, r]));
  const out = new Map<string, QueuePolicy>();
  for (const row of rows) {
    const path: QueuePolicyRow[] = [];
    for (let q: QueuePolicyRow | undefined = row; q && !path.includes(q); ) {
      path.push(q);
      q = q.parentName === null ? undefined : byName.get(q.parentName);
    }
    out.set(row.name, effectivePolicy(path));
  }
  return out;
}
