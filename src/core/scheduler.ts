// One scheduling session, end to end: build the session from a snapshot, open the
// configured plugins in tier order, run the configured actions in order, and return
// the decisions as plain data. A pure function of (snapshot, configuration).
import { createAction } from "./actions/registry.js";
import type { JobOutcome, QueueShare, SessionResult } from "./api/result.js";
import type { Snapshot } from "./api/spec.js";
import { type SchedulerConfig, configuredPlugins, defaultSchedulerConfig } from "./framework/config.js";
import { Session } from "./framework/session.js";
import type { SessionCarry } from "./framework/carry/session-carry.js";
import { type PluginRegistry, defaultPluginRegistry } from "./plugins/registry.js";

export interface RunOptions {
  registry?: PluginRegistry;
  /** The previous session's jobs and nodes on the same cluster, used again where untouched;
   * the session's own are kept in it for the next. */
  carry?: SessionCarry;
  /**
   * Pods (bound or pipelined) after which the session places no further job: allocate stops
   * between jobs and the actions after it do not run (SessionResult.stoppedAtLimit). A cycle
   * then commits what it has and the next goes on, instead of one cycle holding back every
   * bind of a large backlog until all of it is decided. Unlimited when absent.
   */
  maxPlacements?: number;
}

/** Build and open a session (plugins registered, no action run yet). */
export function openSession(snapshot: Snapshot, config: SchedulerConfig, opts: RunOptions = {}): Session {
  const registry = opts.registry ?? defaultPluginRegistry();
  const ssn = new Session(snapshot, config, opts.carry);
  ssn.open(configuredPlugins(config).map((p) => registry.create(p.name, p.arguments ?? {})));
  return ssn;
}

export function runSession(
  snapshot: Snapshot,
  config: SchedulerConfig = defaultSchedulerConfig(),
  opts: RunOptions = {},
): SessionResult {
  const ssn = openSession(snapshot, config, opts);
  if (opts.maxPlacements !== undefined && opts.maxPlacements > 0) ssn.placementLimit = opts.maxPlacements;
  for (const name of config.actions) {
    createAction(name).execute(ssn);
    if (ssn.unreached) break;
  }
  const result = sessionResult(ssn);
  ssn.close();
  opts.carry?.keep(ssn.jobs, ssn.nodeByName);
  return result;
}

/** Fair shares per queue as the proportion plugin computes them on this snapshot. */
export function computeFairShare(
  snapshot: Snapshot,
  config: SchedulerConfig = defaultSchedulerConfig(),
  opts: RunOptions = {},
): QueueShare[] {
  const ssn = openSession(snapshot, config, opts);
  const shares = ssn.queueSharesFn ? ssn.queueSharesFn() : [];
  ssn.close();
  return shares;
}

function sameGroups(a: readonly string[], b: readonly string[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export function sessionResult(ssn: Session): SessionResult {
  const pods: SessionResult["pods"] = [];
  const jobs: JobOutcome[] = [];
  for (const job of ssn.jobs.values()) {
    const podStatuses = ssn.memos.lasting.statusCounts(job);
    // No pod of an untouched job changed status, so none moved either.
    if (!ssn.memos.lasting.untouched(job))
      for (const p of job.pods) {
        const changed =
          p.status !== p.spec.status ||
          p.nodeName !== p.spec.node ||
          !sameGroups(p.gpuGroups, p.spec.gpuGroups);
        if (changed)
          pods.push({
            job: job.uid,
            pod: p.uid,
            status: p.status,
            node: p.nodeName,
            gpuGroups: [...p.gpuGroups],
          });
      }
    jobs.push({
      uid: job.uid,
      podStatuses,
      fitErrors: [...job.fitErrors],
      shortfall: null,
      lastStartAt: job.lastStartAt,
      staleSince: job.staleSince,
    });
  }
  const result: SessionResult = {
    binds: [...ssn.binds],
    pipelines: [...ssn.pipelines],
    evictions: [...ssn.evictions],
    pods,
    jobs,
    queues: ssn.queueSharesFn ? ssn.queueSharesFn() : [],
    searchCursors: ssn.searchCursors.result(ssn),
  };
  if (ssn.unreached) result.stoppedAtLimit = { unreached: ssn.unreached.map((j) => j.uid) };
  return result;
}
