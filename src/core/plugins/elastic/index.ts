// elastic: jobs below their gang minimum first, then jobs exactly at it, then jobs above it.
import type { JobInfo } from "../../api/podgroup-info.js";
import type { Plugin } from "../../framework/session.js";

export const name = "elastic";

type State = "below" | "exact" | "above";

function state(job: JobInfo): State {
  let exact = true;
  for (const ps of job.podSetList) {
    if (ps.activeAllocated < ps.minAvailable) return "below";
    if (ps.activeAllocated > ps.minAvailable) exact = false;
  }
  return exact ? "exact" : "above";
}

export function compareElastic(l: JobInfo, r: JobInfo): number {
  const ls = state(l);
  const rs = state(r);
  if (ls === "below" && rs !== "below") return -1;
  if (ls === "exact" && rs === "above") return -1;
  if (ls !== "below" && rs === "below") return 1;
  if (ls === "above" && rs === "exact") return 1;
  return 0;
}

export function create(): Plugin {
  return {
    name,
    onSessionOpen(ssn) {
      ssn.jobOrderFns.push(compareElastic);
    },
  };
}
