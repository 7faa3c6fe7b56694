// The snapshot a cluster presents to the next cycle if every decision of this one took
// effect at once: what a simulated cluster, a convergence benchmark and multi-cycle
// property tests need. A pure function of the snapshot and the session run on it.
import type { PodSpec, Snapshot } from "./api/spec.js";
import type { SessionResult } from "./api/result.js";
import type { Session } from "./framework/session.js";

/**
 * Bound pods run where they were bound; pipelined and evicted pods are pending again
 * (a pipelined one nominated to its node, whose freed room takes it next cycle; an
 * evicted pod's job wants it back); every other pod keeps the state the session left it
 * in. The clock moves `periodMs`, and the searches a budget stopped go on
 * (`result.searchCursors`).
 */
export function advanceSnapshot(
  snapshot: Snapshot,
  ssn: Session,
  result: Pick<SessionResult, "searchCursors">,
  periodMs: number,
): Snapshot {
  return {
    ...snapshot,
    now: snapshot.now + periodMs,
    searchCursors: result.searchCursors,
    jobs: snapshot.jobs.map((spec) => {
      const job = ssn.jobs.get(spec.uid);
      if (!job) return spec;
      const after = new Map(job.pods.map((p) => [p.uid, p]));
      const pods = spec.pods.map((p): PodSpec => {
        const q = after.get(p.uid);
        if (!q) return p;
        switch (q.status) {
          case "Binding":
            return {
              ...p,
              status: "Running",
              node: q.nodeName,
              gpuGroups: [...q.gpuGroups],
              gpuDevices: [...q.gpuDevices],
            };
          // Pending again; a pipelined pod nominated to its node, as the scheduler marks it (scored first there).
          case "Pipelined":
          case "Releasing":
            return {
              ...p,
              status: "Pending",
              node: null,
              gpuGroups: [],
              gpuDevices: [],
              nominatedNode: q.status === "Pipelined" ? q.nodeName : null,
            };
          default:
            return q.status === p.status && q.nodeName === p.node
              ? p
              : {
                  ...p,
                  status: q.status,
                  node: q.nodeName,
                  gpuGroups: [...q.gpuGroups],
                  gpuDevices: [...q.gpuDevices],
                };
        }
      });
      // allocate stamps a job's first bind with the session's `now`; stalegangeviction
      // starts (or clears) the grace clock of a gang below its minimum.
      const same =
        job.lastStartAt === spec.lastStartAt &&
        job.staleSince === spec.staleSince &&
        pods.every((p, i) => p === spec.pods[i]);
      // An unchanged job keeps its spec object: the next session may carry it (SessionCarry).
      return same ? spec : { ...spec, lastStartAt: job.lastStartAt, staleSince: job.staleSince, pods };
    }),
  };
}
