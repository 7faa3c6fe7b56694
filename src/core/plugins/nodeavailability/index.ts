// nodeavailability: prefer nodes where the task fits in idle resources alone (no
// waiting for releasing pods).
import type { Plugin } from "../../framework/session.js";
import { SCORES } from "../scores.js";

export const name = "nodeavailability";

export function create(): Plugin {
  return {
    name,
    onSessionOpen(ssn) {
      ssn.nodeOrderFns.push((task, node) => (node.isTaskAllocatable(task) ? SCORES.availability : 0));
    },
  };
}
