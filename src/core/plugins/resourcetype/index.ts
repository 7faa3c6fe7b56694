// resourcetype: keep CPU-only pods on CPU-only nodes when they can, leaving GPU nodes to GPU work.
import type { Plugin } from "../../framework/session.js";
import { SCORES } from "../scores.js";

export const name = "resourcetype";

export function create(): Plugin {
  return {
    name,
    onSessionOpen(ssn) {
      ssn.nodeOrderFns.push((task, node) =>
        task.req.isCpuOnly && node.isCpuOnlyNode ? SCORES.resourceType : 0,
      );
    },
  };
}
