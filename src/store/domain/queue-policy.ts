// What a queue's jobs may ask of a cluster: the namespaces their pods may run in and the pod
// security level their templates are held to; and the request a workload's container that asks
// for none gets. Each queue may set any; an unset one is the parent's, and at the top of the tree
// the defaults below.
import type { DefaultRequest } from "../../workload/index.js";
import { DEFAULT_POD_SECURITY, type PodSecurityLevel } from "../validation/pod-security/index.js";
import {
  effectiveQueuePodPolicy,
  type QueuePodPolicy,
  queuePodPolicyRowOf,
} from "../validation/pod-policy.js";

/** The namespace of a top-level queue that sets none: one of its own, so that teams' pods do not
 * share a namespace (and its secrets, service accounts and quotas) by default. Queues made before
 * this rule had "default" written into their row by the migration that introduced it. */
export const ownNamespace = (topQueue: string): string => `fleetq-${topQueue}`;

/** What a workload's container that asks for no cpu or memory gets, per container, when no queue
 * up the tree says otherwise: half a core and a GiB. */
export const FLEET_DEFAULT_REQUEST: DefaultRequest = { cpuMillis: 500, memory: 2 ** 30 };

export interface QueuePolicy {
  namespaces: readonly string[];
  podSecurity: PodSecurityLevel;
  defaultRequest: DefaultRequest;
  /** Allow-lists of pod fields the Pod Security Standards leave open. */
  pod: QueuePodPolicy;
}

/** One queue's own settings: `namespaces` [] and `podSecurity`, `defaultRequest`, `podPolicy`
 * (each of its lists) null inherit. */
export interface QueuePolicyRow {
  name: string;
  parentName: string | null;
  namespaces: readonly string[];
  podSecurity: PodSecurityLevel | null;
  defaultRequest: unknown;
  podPolicy?: unknown;
}

/** A stored default request ({cpuMillis, memory}), or null when the queue sets none. */
export function defaultRequestOf(value: unknown): DefaultRequest | null {
  if (value === null || typeof value !== "object") return null;
  const v = value as Partial<DefaultRequest>;
  return typeof v.cpuMillis === "number" && typeof v.memory === "number"
    ? { cpuMillis: v.cpuMillis, memory: v.memory }
    : null;
}

/** The effective policy from a queue's own row and its ancestors', nearest first. */
export function effectivePolicy(pathToRoot: readonly QueuePolicyRow[]): QueuePolicy {
  return {
    namespaces: pathToRoot.find((q) => q.namespaces.length > 0)?.namespaces ?? [
      ownNamespace(pathToRoot.at(-1)?.name ?? ""),
    ],
    podSecurity: pathToRoot.find((q) => q.podSecurity !== null)?.podSecurity ?? DEFAULT_POD_SECURITY,
    defaultRequest:
      pathToRoot.map((q) => defaultRequestOf(q.defaultRequest)).find((d) => d !== null) ??
      FLEET_DEFAULT_REQUEST,
    pod: effectiveQueuePodPolicy(pathToRoot.map((q) => queuePodPolicyRowOf(q.podPolicy))),
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
