// priority: higher job priority first.
import type { Plugin } from "../../framework/session.js";

export const name = "priority";

export function create(): Plugin {
  return {
    name,
    onSessionOpen(ssn) {
      ssn.jobOrderFns.push((l, r) => (l.priority > r.priority ? -1 : l.priority < r.priority ? 1 : 0));
    },
  };
}
