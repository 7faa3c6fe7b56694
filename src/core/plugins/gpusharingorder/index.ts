// gpusharingorder: prefer nodes with a partly used shared GPU that can take the task,
// so shared devices fill up before new ones are opened.
import type { Plugin } from "../../framework/session.js";
import { SCORES } from "../scores.js";

export const name = "gpusharingorder";

export function create(): Plugin {
  return {
    name,
    onSessionOpen(ssn) {
      ssn.nodeOrderFns.push((task, node) => {
        for (const g of node.shared.groups())
          if (node.shared.fitsOnGroup(task.req, g)) return SCORES.gpuSharing;
        return 0;
      });
    },
  };
}
