// The callback types plugins register on the session (KAI: framework/session_plugins.go).
import type { JobInfo, PodSet, SubGroupSet } from "../api/podgroup-info.js";
import type { NodeInfo } from "../api/node-info.js";
import type { PodInfo } from "../api/pod-info.js";
import type { QueueInfo } from "../api/queue-info.js";
import type { Scenario } from "./scenario.js";

/** Negative: left first; positive: right first; 0: no opinion (ask the next plugin). */
export type CompareFn<T> = (l: T, r: T) => number;

export type QueueOrderFn = (
  lq: QueueInfo,
  rq: QueueInfo,
  lJob: JobInfo | null,
  rJob: JobInfo | null,
  lVictims: JobInfo[] | null,
  rVictims: JobInfo[] | null,
) => number;

/** Called once per task with the node set before scoring (e.g. binpack's min/max). */
export type NodePreOrderFn = (task: PodInfo, nodes: readonly NodeInfo[]) => void;
/** A node's score for a task; the session sums all plugins' scores. */
export type NodeOrderFn = (task: PodInfo, node: NodeInfo) => number;

/**
 * The placement strategy's score (binpack/spread): at most `maxScore`, and ordering the
 * nodes that have the pod's resource exactly as `rankKey` does (smaller = better). The
 * session uses the key to keep node orders incrementally instead of rescoring every
 * node for every pod.
 */
export interface PlacementScore {
  preOrder: NodePreOrderFn | null;
  score: NodeOrderFn;
  maxScore: number;
  /** The resource the pod is placed by. */
  resourceOf: (task: PodInfo) => "gpu" | "cpu";
  /** null when the node has none of the resource (its score is then 0 whatever its state). */
  rankKey: (task: PodInfo, node: NodeInfo) => number | null;
}

/** A node score that depends on more than the pod's spec and the node (e.g. the sub-group being placed). */
export interface AttemptNodeScore {
  fn: NodeOrderFn;
  /** The pods it scores at all (others get 0). */
  appliesTo: (task: PodInfo) => boolean;
}
/** The score of a device candidate: a shared group id, or WHOLE_GPU for an idle/releasing device. */
export type GpuOrderFn = (task: PodInfo, node: NodeInfo, group: string) => number;
export const WHOLE_GPU = "-2";

/** A reason the task cannot be placed anywhere, or null. */
export type PrePredicateFn = (task: PodInfo, job: JobInfo) => string | null;
/** A reason the task cannot be placed on this node, or null. */
export type PredicateFn = (task: PodInfo, job: JobInfo, node: NodeInfo) => string | null;

export interface SchedulableResult {
  schedulable: boolean;
  reason?: string;
  message?: string;
}
export type JobCapacityFn = (job: JobInfo, tasks: readonly PodInfo[]) => SchedulableResult;
export type TaskOnNodeCapacityFn = (task: PodInfo, job: JobInfo, node: NodeInfo) => SchedulableResult;

export type CanReclaimFn = (job: JobInfo) => boolean;
export type VictimFilterFn = (preemptor: JobInfo, victim: JobInfo) => boolean;
export type ScenarioValidatorFn = (scenario: Scenario) => boolean;
/**
 * A necessary condition of the reclaim validators, used only to skip hopeless scenarios:
 * true when no scenario that evicts at most `evicted` (distinct pods; null: unknown, any) can
 * be valid while a pod of `victim` stays evicted — such a victim may only be moved.
 */
export type ReclaimMustMoveFn = (
  preemptor: JobInfo,
  victim: JobInfo,
  evicted: readonly PodInfo[] | null,
) => boolean;

/** A sub-group (pod set or sub-group set) being placed, for node subsetting (topology). */
export interface SubGroupTarget {
  name: string;
  topology: PodSet["topology"];
  podSets: readonly PodSet[];
  set: SubGroupSet | null;
}
/** Split a node set into the candidate node sets to try, in order. */
export type SubsetNodesFn = (
  job: JobInfo,
  target: SubGroupTarget,
  tasks: readonly PodInfo[],
  nodes: readonly NodeInfo[],
) => { sets: NodeInfo[][]; error: string | null };

/** Extra annotations for a bind request. */
export type BindRequestMutateFn = (task: PodInfo, node: string) => Record<string, string>;

export interface EventHandler {
  allocate?: (task: PodInfo) => void;
  deallocate?: (task: PodInfo) => void;
}
