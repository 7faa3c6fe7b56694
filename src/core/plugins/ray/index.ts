// ray: a Ray cluster's head pod goes before its workers.
import type { Plugin } from "../../framework/session.js";
import { roleFirst } from "../taskorder/role-first.js";

export const name = "ray";
export const ROLE_LABEL = "ray.io/node-type";

export function create(): Plugin {
  return {
    name,
    onSessionOpen(ssn) {
      ssn.taskOrderFns.push(roleFirst(ROLE_LABEL, "head"));
    },
  };
}
