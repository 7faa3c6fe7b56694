// What a stored pod state means. Which states hold a node is the core's definition (holdsNode):
// a stored state holds one when the status it is loaded as does.
import { type PodStatus, holdsNode } from "../../core/index.js";
import type { PodState } from "../types.js";

/** The status a stored pod is loaded into a session as. PIPELINED is session-only in the core: a
 * pipelined pod is loaded as Pending (its nomination is a hint of the last session, not a
 * placement). */
export const CORE_POD_STATUS: Readonly<Record<PodState, PodStatus>> = {
  PENDING: "Pending",
  PIPELINED: "Pending",
  BINDING: "Binding",
  RUNNING: "Running",
  RELEASING: "Releasing",
  SUCCEEDED: "Succeeded",
  FAILED: "Failed",
};

const POD_STATES = Object.keys(CORE_POD_STATUS) as PodState[];

/** Pod states that hold node resources (BINDING, RUNNING, RELEASING). */
export const RESOURCE_HOLDING_POD_STATES: PodState[] = POD_STATES.filter((s) =>
  holdsNode(CORE_POD_STATUS[s]),
);

export const holdsNodeState = (s: PodState): boolean => RESOURCE_HOLDING_POD_STATES.includes(s);

/** A pod that ran and will not run again. */
export const TERMINAL_POD_STATES: readonly PodState[] = ["SUCCEEDED", "FAILED"];

/** Placed on the cluster: holding a node, or nominated to one (PIPELINED). */
export const PLACED_POD_STATES: readonly PodState[] = ["PIPELINED", ...RESOURCE_HOLDING_POD_STATES];

/**
 * States whose row keeps a node name: the node a pod holds, is nominated to (PIPELINED) or ran on
 * (finished). A pod going to any other state (PENDING) leaves its node.
 */
export const keepsNodeName = (s: PodState): boolean =>
  s === "PIPELINED" || holdsNodeState(s) || TERMINAL_POD_STATES.includes(s);
