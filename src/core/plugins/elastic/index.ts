// elastic: jobs below their gang minimum first, then jobs exactly at it, then jobs above it.
import type { JobInfo } from "../../api/podgroup-info.js";
import type { Plugin } from "../../framework/session.js";

export const name = "elastic";

export function compareElastic(l: JobInfo, r: JobInfo): number {
  const ls = l.gangState;
  const rs = r.gangState;
  return ls < rs ? -1 : ls > rs ? 1 : 0;
}

export function create(): Plugin {
  return {
    name,
    onSessionOpen(ssn) {
      ssn.jobOrderFns.push(compareElastic);
    },
  };
}
