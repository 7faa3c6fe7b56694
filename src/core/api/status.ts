// Groups of pod statuses, as KAI's pod_status package defines them.
import type { PodStatus } from "./spec.js";

const set = (...s: PodStatus[]) => new Set<PodStatus>(s);

/**
 * Placed on a node and holding its resources (until it finishes or is gone from the node): the
 * one definition of "which pod states hold a node", for the core, the store (its stored states
 * are those that map to these) and admission.
 */
export const NODE_HOLDING_STATUSES: readonly PodStatus[] = [
  "Allocated",
  "Binding",
  "Bound",
  "Running",
  "Releasing",
];
const HOLDS_NODE = set(...NODE_HOLDING_STATUSES);
/** Holds resources on a node, or is pipelined onto resources being released there. */
const ACTIVE_USED = set(...NODE_HOLDING_STATUSES, "Pipelined");
/** Counts toward a gang (placed, not leaving). */
const ACTIVE_ALLOCATED = set("Allocated", "Pipelined", "Binding", "Bound", "Running");
/** Not finished and not leaving. */
const ALIVE = set("Allocated", "Pipelined", "Binding", "Bound", "Running", "Pending", "Gated");
/** Counts toward a queue's allocated share. */
const ALLOCATED = set("Allocated", "Bound", "Binding", "Running");

export const holdsNode = (s: PodStatus): boolean => HOLDS_NODE.has(s);
export const isActiveUsed = (s: PodStatus): boolean => ACTIVE_USED.has(s);
export const isActiveAllocated = (s: PodStatus): boolean => ACTIVE_ALLOCATED.has(s);
export const isAlive = (s: PodStatus): boolean => ALIVE.has(s);
export const isAllocated = (s: PodStatus): boolean => ALLOCATED.has(s);

export const POD_STATUSES: readonly PodStatus[] = [
  "Pending",
  "Gated",
  "Allocated",
  "Pipelined",
  "Binding",
  "Bound",
  "Running",
  "Releasing",
  "Succeeded",
  "Failed",
];

/** Each status's position in POD_STATUSES (for per-status counters in typed arrays). */
export const STATUS_INDEX = Object.fromEntries(POD_STATUSES.map((s, i) => [s, i])) as Record<
  PodStatus,
  number
>;
