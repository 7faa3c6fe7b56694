// What a Kubernetes pod's phase means for the control plane, and how pods users created
// themselves are read as members of a pod group.
import type { V1Container, V1Pod } from "@kubernetes/client-node";
import { bytes, cpuMillis, parseQuantity } from "../../quantity.js";
import {
  GPU_PRODUCT_LABEL,
  GPU_RESOURCE,
  JOB_ID_KEY,
  MIN_MEMBER_KEY,
  POD_GROUP_KEY,
  POD_NAME_KEY,
  PRIORITY_KEY,
  QUEUE_KEY,
} from "../../../protocol/labels.js";
import type { ExternalPod, PodState } from "../types.js";

/** The job a pod belongs to, once fleetq created or bound it; null otherwise. */
export function podJobId(pod: V1Pod): string | null {
  return pod.metadata?.annotations?.[JOB_ID_KEY] ?? null;
}

/** The pod's name in the control plane: pods fleetq created carry it, users' pods keep theirs. */
export function podControlName(pod: V1Pod): string {
  return pod.metadata?.annotations?.[POD_NAME_KEY] ?? pod.metadata?.name ?? "";
}

/** Created by fleetq from a job's template (users' pods never carry the job label). */
export function createdByFleetq(pod: V1Pod): boolean {
  return Boolean(pod.metadata?.labels?.[JOB_ID_KEY]);
}

/** When a finished pod's last container stopped; null when the status does not say. */
export function finishedAt(pod: V1Pod): number | null {
  let latest: number | null = null;
  for (const status of pod.status?.containerStatuses ?? []) {
    const at = status.state?.terminated?.finishedAt;
    const time = at ? new Date(at).getTime() : Number.NaN;
    if (!Number.isNaN(time)) latest = Math.max(latest ?? time, time);
  }
  return latest;
}

/** The pod group of a pod a user created for fleetq to place; null when it is not one. */
export function podGroupName(pod: V1Pod): string | null {
  return pod.metadata?.annotations?.[POD_GROUP_KEY] ?? pod.metadata?.labels?.[POD_GROUP_KEY] ?? null;
}

export interface ObservedState {
  state: PodState;
  message?: string;
  /** A finished pod's exit code: its first container that failed, else 0. */
  exitCode?: number;
}

/** The state to report for a pod of a known job; null = nothing the API needs (e.g. not
 * yet bound, or bound and starting: the bind result already said BINDING succeeded). */
export function observedState(pod: V1Pod): ObservedState | null {
  const phase = pod.status?.phase;
  const message = pod.status?.message ?? pod.status?.reason;
  if (phase === "Succeeded") return { state: "SUCCEEDED", ...exitCodeOf(pod) };
  if (phase === "Failed")
    return { state: "FAILED", message: message ?? "the pod failed", ...exitCodeOf(pod) };
  if (!pod.spec?.nodeName) return null;
  if (pod.metadata?.deletionTimestamp) return { state: "RELEASING", message: "the pod is terminating" };
  if (phase === "Running") return { state: "RUNNING" };
  return null;
}

/** The exit code a finished pod reports: the first of its containers that exited non-zero, else
 * the first that exited; none when no container says. */
function exitCodeOf(pod: V1Pod): { exitCode?: number } {
  const codes = (pod.status?.containerStatuses ?? [])
    .map((s) => s.state?.terminated?.exitCode)
    .filter((c): c is number => typeof c === "number");
  const code = codes.find((c) => c !== 0) ?? codes[0];
  return code === undefined ? {} : { exitCode: code };
}

export function isTerminal(state: PodState | undefined): boolean {
  return state === "SUCCEEDED" || state === "FAILED";
}

export function externalPod(pod: V1Pod): ExternalPod {
  const containers = pod.spec?.containers ?? [];
  return {
    name: pod.metadata?.name ?? "",
    uid: pod.metadata?.uid ?? "",
    resources: {
      cpuMillis: sum(containers, "cpu", cpuMillis),
      memory: sum(containers, "memory", bytes),
      gpus: sum(containers, GPU_RESOURCE, parseQuantity),
      gpuMemory: 0,
    },
    gpuModel: pod.spec?.nodeSelector?.[GPU_PRODUCT_LABEL] ?? null,
    nodeSelector: { ...(pod.spec?.nodeSelector ?? {}) },
  };
}

export function podGroupSettings(pod: V1Pod): {
  queue: string;
  minMember: number | null;
  priority: number | null;
} {
  const read = (key: string) => pod.metadata?.annotations?.[key] ?? pod.metadata?.labels?.[key];
  const int = (value: string | undefined) =>
    value !== undefined && /^-?\d+$/.test(value) ? Number(value) : null;
  return {
    queue: read(QUEUE_KEY) ?? "default",
    minMember: int(read(MIN_MEMBER_KEY)),
    priority: int(read(PRIORITY_KEY)) ?? pod.spec?.priority ?? null,
  };
}

/** Sum over containers of a resource's request (Kubernetes defaults a missing request to
 * the limit). */
function sum(containers: V1Container[], resource: string, parse: (q: string) => number): number {
  let total = 0;
  for (const container of containers) {
    const value = container.resources?.requests?.[resource] ?? container.resources?.limits?.[resource];
    if (value !== undefined) {
      try {
        total += parse(value);
      } catch {
        // an unparsable quantity: the API server would have refused the pod already
      }
    }
  }
  return total;
}
