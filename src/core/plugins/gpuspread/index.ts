// gpuspread: on a node, put a shared-GPU task on the least used device (a fresh one first).
import type { Plugin } from "../../framework/session.js";
import { WHOLE_GPU } from "../../framework/callbacks.js";

export const name = "gpuspread";

export function create(): Plugin {
  return {
    name,
    onSessionOpen(ssn) {
      ssn.gpuOrderFns.push((_task, node, group) =>
        group === WHOLE_GPU ? 1 : 1 - node.shared.usedPortion(group),
      );
    },
  };
}
