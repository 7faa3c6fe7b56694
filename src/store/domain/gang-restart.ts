// Gang restarts: what becomes of a job with a restart policy when one of its pods fails. The
// whole gang restarts as one unit — every pod that holds a node is evicted, every other pod is
// made pending again, and the next attempt's pods are held back until the previous attempt has
// left its nodes and the backoff has passed — until the policy's restarts are used up; then the
// job fails and the rest of its pods are stopped. A failure the policy does not restart on (an
// exit code outside onExitCodes) fails the job the same way. Pure: the store's operations apply
// what `planGangFailure` decides (operations/gang-restarts.ts).
import type { Job, PodState } from "../types.js";
import { holdsNodeState } from "./pod-states.js";

export interface RestartPolicy {
  maxRestarts: number;
  backoffSeconds: number;
  /** Exit codes that restart the gang; null = any failure does. */
  onExitCodes: number[] | null;
}

export const DEFAULT_RESTART_BACKOFF_SECONDS = 10;

/** The stored policy (job.restart_policy), or null when the job has none. */
export function restartPolicyOf(value: unknown): RestartPolicy | null {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return null;
  const v = value as Partial<RestartPolicy>;
  if (typeof v.maxRestarts !== "number") return null;
  return {
    maxRestarts: v.maxRestarts,
    backoffSeconds: typeof v.backoffSeconds === "number" ? v.backoffSeconds : DEFAULT_RESTART_BACKOFF_SECONDS,
    onExitCodes: Array.isArray(v.onExitCodes) ? v.onExitCodes : null,
  };
}

/** How a pod's run ended against the gang's will. */
export interface PodFailure {
  pod: string;
  /** The container's exit code, when the cluster reported one. */
  exitCode: number | null;
  /** The node it ran on. */
  node: string | null;
  /** What the cluster said (or that the pod vanished or was deleted). */
  message: string | null;
}

export interface GangJob extends Pick<Job, "id" | "name" | "state" | "restarts"> {
  restartPolicy: RestartPolicy | null;
}

export interface GangPod {
  id: string;
  name: string;
  state: PodState;
  nodeName: string | null;
}

export type GangDecision =
  /** No policy: the job follows its pods as any job does. */
  | { kind: "none" }
  | {
      kind: "restart";
      /** The job's restarts after this one (its attempt is one more). */
      restarts: number;
      /** When the next attempt may be placed, at the earliest. */
      restartAfter: Date;
      /** Pods on a node: evicted (RELEASING, an EVICT request each). */
      evict: GangPod[];
      /** Every other pod: pending again, off any node. */
      reset: GangPod[];
      message: string;
    }
  | { kind: "fail"; message: string };

/** What the failure of `failure.pod` does to its job (`pods`: every pod of the job as it is now). */
export function planGangFailure(
  job: GangJob,
  pods: readonly GangPod[],
  failure: PodFailure,
  now: Date,
): GangDecision {
  const policy = job.restartPolicy;
  if (!policy || job.state === "SUCCEEDED" || job.state === "FAILED" || job.state === "CANCELLED")
    return { kind: "none" };
  const what = failureText(failure);
  if (failure.exitCode !== null && policy.onExitCodes && !policy.onExitCodes.includes(failure.exitCode))
    return {
      kind: "fail",
      message: `job ${job.name} failed: ${what}; exit code ${failure.exitCode} is not one that restarts it (onExitCodes ${policy.onExitCodes.join(", ")})`,
    };
  if (job.restarts >= policy.maxRestarts)
    return {
      kind: "fail",
      message: `job ${job.name} failed: ${what}; no restarts left (${job.restarts} of ${policy.maxRestarts} used)`,
    };
  const restarts = job.restarts + 1;
  const evict = pods.filter((p) => p.nodeName !== null && holdsNodeState(p.state) && p.state !== "RELEASING");
  const evicting = new Set(evict.map((p) => p.id));
  const reset = pods.filter((p) => !evicting.has(p.id) && p.state !== "RELEASING" && p.state !== "PENDING");
  const backoff = policy.backoffSeconds;
  return {
    kind: "restart",
    restarts,
    restartAfter: new Date(+now + backoff * 1000),
    evict,
    reset,
    message:
      `job ${job.name} restarted (restart ${restarts} of ${policy.maxRestarts}): ${what}; ` +
      `attempt ${restarts + 1} starts once every pod has stopped${backoff ? ` and ${backoff}s have passed` : ""}`,
  };
}

/** "pod worker-1 failed with exit code 3 on node n2". */
export function failureText(f: PodFailure): string {
  const code = f.exitCode !== null ? ` with exit code ${f.exitCode}` : "";
  const where = f.node ? ` on node ${f.node}` : "";
  const said = f.message ? ` (${f.message})` : "";
  return `pod ${f.pod} failed${code}${where}${said}`;
}

/** Why a restarted job waits, as its pending reason says it. */
export function restartingReason(restarts: number, restartAfter: Date): string {
  return `restarting (attempt ${restarts + 1}): waiting for the previous attempt's pods to stop and the backoff to pass (until ${restartAfter.toISOString()})`;
}
