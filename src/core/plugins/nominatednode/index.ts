// nominatednode: a pod nominated to a node (e.g. where it was pipelined last cycle) goes back there first.
import type { Plugin } from "../../framework/session.js";
import { SCORES } from "../scores.js";

export const name = "nominatednode";

export function create(): Plugin {
  return {
    name,
    onSessionOpen(ssn) {
      ssn.nodeOrderFns.push((task, node) =>
        task.spec.nominatedNode === node.name ? SCORES.nominatedNode : 0,
      );
    },
  };
}
