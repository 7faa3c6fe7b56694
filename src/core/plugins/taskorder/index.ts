// taskorder: pods with a task priority go first, higher priority first.
import type { PodInfo } from "../../api/pod-info.js";
import type { Plugin } from "../../framework/session.js";

export const name = "taskorder";
/** The pod label KAI reads; a pod's `priority` field is the same thing. */
export const TASK_PRIORITY_LABEL = "kai.scheduler/task-priority";

function taskPriority(p: PodInfo): number | null | undefined {
  if (p.spec.priority !== null && p.spec.priority !== undefined) return p.spec.priority;
  const v = p.spec.labels[TASK_PRIORITY_LABEL];
  if (v === undefined) return null;
  const n = Number(v);
  return Number.isInteger(n) ? n : undefined;
}

export function compareTaskPriority(l: PodInfo, r: PodInfo): number {
  const lp = taskPriority(l);
  const rp = taskPriority(r);
  if (lp !== null && rp === null) return -1;
  if (lp === null && rp !== null) return 1;
  if (lp === null && rp === null) return 0;
  if (lp === undefined) return 1; // unparsable label
  if (rp === undefined) return -1;
  return lp! > rp! ? -1 : lp! < rp! ? 1 : 0;
}

export function create(): Plugin {
  return {
    name,
    onSessionOpen(ssn) {
      ssn.taskOrderFns.push(compareTaskPriority);
    },
  };
}
