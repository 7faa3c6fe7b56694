// gpupack: on a node, put a shared-GPU task on the most used device that can take it.
import type { Plugin } from "../../framework/session.js";
import { WHOLE_GPU } from "../../framework/callbacks.js";

export const name = "gpupack";

export function create(): Plugin {
  return {
    name,
    onSessionOpen(ssn) {
      ssn.gpuOrderFns.push((_task, node, group) =>
        group === WHOLE_GPU ? 0 : node.shared.usedPortion(group),
      );
    },
  };
}
