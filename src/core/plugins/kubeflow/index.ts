// kubeflow: a training job's master pod goes before its workers.
import type { Plugin } from "../../framework/session.js";
import { roleFirst } from "../taskorder/role-first.js";

export const name = "kubeflow";
export const ROLE_LABEL = "training.kubeflow.org/job-role";

export function create(): Plugin {
  return {
    name,
    onSessionOpen(ssn) {
      ssn.taskOrderFns.push(roleFirst(ROLE_LABEL, "master"));
    },
  };
}
