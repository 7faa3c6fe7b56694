// The commit's planning half, pure: a session result and the rows its snapshot was built from →
// exactly what changes (pod states, BindRequests, expired pipelines, jobs to refresh with their
// notes, events). Nothing is read: the rows are current for every pod of the cluster when the
// generation still matches, which the writer checks before applying the plan.
import type { PodStatus, SessionResult } from "../../core/index.js";
import { holdsNodeState, keepsNodeName } from "../domain/pod-states.js";
import { pendingReasonFromOutcome } from "../domain/pending-reason.js";
import type { NewEvent } from "../events.js";
import type { PodState } from "../types.js";
import type { PodRow, SnapshotRows } from "../snapshot/rows.js";
import type { NewBindRequest } from "./bind-request-rows.js";
import { type JobNotes, refreshJob } from "./job-refresh.js";
import type { PodChange } from "./pod-changes.js";

export interface PlannedPodChange extends PodChange {
  job: string;
}

export interface CommitPlan {
  /** Pods whose state or node the session changed (expired pipelines included). */
  pods: PlannedPodChange[];
  /** BindRequests to create, binds before evictions in result order. */
  requests: NewBindRequest[];
  /** One event per job and kind of placement. */
  events: NewEvent[];
  /** Jobs whose state, pending reason or bookkeeping changes, with what the session says. */
  jobs: ReadonlyMap<string, JobNotes>;
}

/** Core status at the end of a session → stored pod state. Allocated/Bound do not survive a
 * commit in the core (they become Binding); mapped defensively all the same. */
const STORED_STATE: Partial<Record<PodStatus, PodState>> = {
  Pending: "PENDING",
  Pipelined: "PIPELINED",
  Allocated: "BINDING",
  Bound: "BINDING",
  Binding: "BINDING",
  Running: "RUNNING",
  Releasing: "RELEASING",
  Succeeded: "SUCCEEDED",
  Failed: "FAILED",
};

interface FinalStatus {
  job: string;
  status: PodStatus;
  node: string | null;
  gpuGroups: string[];
}

export function planCommit(cluster: string, result: SessionResult, rows: SnapshotRows): CommitPlan {
  const finals = finalStatuses(result);
  const moved = keepEvictedPodsWhereTheyRun(result, finals, rows);
  for (const [podId, f] of finals) {
    const pod = rows.pods.get(podId);
    if (!pod || pod.jobId !== f.job || rows.jobs.get(f.job)?.clusterName !== cluster) {
      throw new Error(
        `session result names pod ${podId} of job ${f.job}, which is not on cluster ${cluster}`,
      );
    }
  }
  // A pod the session both bound to and evicted from one node (allocate placed it, a later
  // action took it back): the two requests cancel out and neither goes to the agent, which
  // could otherwise carry them out in either order.
  const evictedFrom = new Map(result.evictions.map((e) => [e.pod, e.node]));
  const takenBack = new Set(result.binds.filter((b) => evictedFrom.get(b.pod) === b.node).map((b) => b.pod));
  const pods = podChanges(result, finals, takenBack, rows);
  const binds = result.binds.filter((b) => !takenBack.has(b.pod) && !moved.has(b.pod));
  const pipelines = result.pipelines.filter((p) => !moved.has(p.pod));
  // One eviction per pod: a pod evicted by two actions (moved, then evicted again) is evicted once.
  const evicted = new Set<string>();
  const evictions = result.evictions.filter((e) => {
    if (takenBack.has(e.pod) || evicted.has(e.pod)) return false;
    evicted.add(e.pod);
    return true;
  });
  const placed = pods.length > 0;
  const requests: NewBindRequest[] = placed
    ? [
        ...binds.map(
          (b): NewBindRequest => ({
            kind: "BIND",
            cluster,
            jobId: b.job,
            podId: b.pod,
            node: b.node,
            gpuGroups: b.gpuGroups,
            gpuDevices: b.gpuDevices ?? [],
            reason: b.action,
          }),
        ),
        ...evictions.map(
          (e): NewBindRequest => ({
            kind: "EVICT",
            cluster,
            jobId: e.job,
            podId: e.pod,
            node: e.node,
            gpuGroups: finals.get(e.pod)?.gpuGroups ?? [],
            gpuDevices: rows.pods.get(e.pod)?.gpuDevices ?? [],
            reason: e.message,
          }),
        ),
      ]
    : [];
  const events = placed
    ? placementEvents({ binds, pipelines, evictions }, new Set(pods.map((c) => c.id)), rows, cluster)
    : [];
  return { pods, requests, events, jobs: jobsToRefresh(cluster, result, pods, rows) };
}

/** Final state of every pod the session touched: placements first, then the session's own
 * final statuses (authoritative when present). */
function finalStatuses(result: SessionResult): Map<string, FinalStatus> {
  const finals = new Map<string, FinalStatus>();
  for (const b of result.binds)
    finals.set(b.pod, { job: b.job, status: "Binding", node: b.node, gpuGroups: b.gpuGroups });
  for (const p of result.pipelines)
    finals.set(p.pod, { job: p.job, status: "Pipelined", node: p.node, gpuGroups: p.gpuGroups });
  for (const e of result.evictions)
    finals.set(e.pod, {
      job: e.job,
      status: "Releasing",
      node: e.node,
      gpuGroups: finals.get(e.pod)?.gpuGroups ?? [],
    });
  for (const p of result.pods)
    finals.set(p.pod, { job: p.job, status: p.status, node: p.node, gpuGroups: p.gpuGroups });
  return finals;
}

/**
 * A pod the session evicted from the node it holds keeps running there, in the GPU groups and on
 * the devices it holds, until the agent has evicted it: the books keep it there, RELEASING, with
 * what it holds, whatever else the session did with it afterwards. Consolidation moves pods so
 * (evicted, then placed on another node, or on another device of the same node), and a later
 * action may evict a moved pod again, which leaves it releasing in the session on the device it
 * was moved to. Its new placement is neither written nor sent: a later session places it again
 * once it is gone. Written where it was moved to, it would leave the memory it holds free in the
 * books (a later bind there over-commits the device while it still runs), or book it onto a device
 * whose memory other pods hold. A pod bound back onto the node it holds is taken back instead
 * (podChanges). Returns the pods whose placement is dropped.
 */
function keepEvictedPodsWhereTheyRun(
  result: SessionResult,
  finals: Map<string, FinalStatus>,
  rows: SnapshotRows,
): Set<string> {
  const moved = new Set<string>();
  for (const e of result.evictions) {
    const pod = rows.pods.get(e.pod);
    const f = finals.get(e.pod);
    if (!pod || !f || pod.nodeName !== e.node || !holdsNodeState(pod.state)) continue;
    const placed = PLACED_STATUS.includes(f.status);
    if (!placed && f.status !== "Releasing") continue;
    if (placed && f.node === e.node && f.status !== "Pipelined") continue;
    finals.set(e.pod, { job: f.job, status: "Releasing", node: e.node, gpuGroups: [...pod.gpuGroups] });
    if (placed) moved.add(e.pod);
  }
  return moved;
}

const PLACED_STATUS: readonly PodStatus[] = ["Pipelined", "Allocated", "Bound", "Binding"];

function podChanges(
  result: SessionResult,
  finals: ReadonlyMap<string, FinalStatus>,
  takenBack: ReadonlySet<string>,
  rows: SnapshotRows,
): PlannedPodChange[] {
  // Devices the core chose for whole-GPU pods it bound (on nodes that report their devices).
  const boundDevices = new Map(result.binds.map((b) => [b.pod, b.gpuDevices ?? []]));
  const evictionReason = new Map(result.evictions.map((e) => [e.pod, e.message]));
  const evictedFrom = new Map(result.evictions.map((e) => [e.pod, e.node]));
  const changes: PlannedPodChange[] = [];
  for (const [podId, f] of finals) {
    let state = STORED_STATE[f.status];
    if (!state) throw new Error(`session result gives pod ${podId} the unknown status ${f.status}`);
    const pod = rows.pods.get(podId)!;
    let node = keepsNodeName(state) ? f.node : null;
    if (takenBack.has(podId)) {
      // Already on that node before the session (evicted, then placed there again): it stays.
      if (pod.nodeName === evictedFrom.get(podId) && holdsNodeState(pod.state)) continue;
      // Never reached the node: unless re-nominated elsewhere, it waits for a node again.
      if (state !== "PIPELINED") {
        state = "PENDING";
        node = null;
      }
    }
    if (state === pod.state && node === pod.nodeName) continue;
    const message =
      state === "RELEASING"
        ? (evictionReason.get(podId) ?? "evicted")
        : state === "PIPELINED"
          ? `waiting for ${f.node} to free resources`
          : null;
    // A bound pod takes the chosen devices; a pod without a node holds none; others keep theirs.
    const gpuDevices =
      state === "BINDING"
        ? boundDevices.get(podId)
        : state === "PENDING" || state === "PIPELINED"
          ? []
          : undefined;
    changes.push({ id: podId, job: f.job, state, node, gpuGroups: f.gpuGroups, gpuDevices, message });
  }
  // A pipelined nomination lives for one session: pipelined pods this session did not
  // pipeline again go back to plain PENDING.
  for (const id of rows.pipelined) {
    const pod = rows.pods.get(id);
    if (pod?.state !== "PIPELINED" || finals.has(id)) continue;
    changes.push({
      id: pod.id,
      job: pod.jobId,
      state: "PENDING",
      node: null,
      gpuGroups: [],
      gpuDevices: [],
      message: null,
    });
  }
  return changes;
}

/**
 * The jobs whose row changes: every job whose pods changed (the writer derives its state from
 * the database under its lock: an agent's confirmation that a bound pod runs moves no generation,
 * so the rows may still say BINDING), and those whose pending reason or bookkeeping the session
 * changes, judged from the rows (not those a session stopped at its placement limit did not get to).
 */
function jobsToRefresh(
  cluster: string,
  result: SessionResult,
  changes: readonly PlannedPodChange[],
  rows: SnapshotRows,
): Map<string, JobNotes> {
  const refresh = new Map<string, JobNotes>(changes.map((c) => [c.job, {}]));
  // A session stopped at its placement limit did not try these: what was said of them stands.
  const unreached = new Set(result.stoppedAtLimit?.unreached);
  for (const o of result.jobs) {
    const job = rows.jobs.get(o.uid);
    // Most jobs of a busy cluster: not pending (so no pending reason) and the session's times
    // are the row's. refreshJob would find nothing to change; spared building its note.
    if (
      job &&
      job.state !== "PENDING" &&
      job.pendingReason === null &&
      (o.lastStartAt ?? 0) === +(job.lastStartAt ?? 0) &&
      (o.staleSince ?? 0) === +(job.staleSince ?? 0) &&
      !refresh.has(o.uid)
    )
      continue;
    const note: JobNotes = {
      pendingReason: unreached.has(o.uid) || job?.held ? undefined : pendingReasonFromOutcome(cluster, o),
      lastStartAt: o.lastStartAt === null ? null : new Date(o.lastStartAt),
      staleSince: o.staleSince === null ? null : new Date(o.staleSince),
    };
    if (refresh.has(o.uid) || !job || refreshJob(job, undefined, note)) refresh.set(o.uid, note);
  }
  return refresh;
}

/** One event per job and kind of placement (not per pod: a 1000-pod gang is one line). */
function placementEvents(
  result: Pick<SessionResult, "binds" | "pipelines" | "evictions">,
  changed: ReadonlySet<string>,
  rows: SnapshotRows,
  cluster: string,
): NewEvent[] {
  const lines = new Map<string, { job: string; kind: string; verb: string; items: string[] }>();
  const add = (job: string, kind: string, verb: string, item: string) => {
    const key = `${job}\u0000${kind}`;
    const entry = lines.get(key) ?? { job, kind, verb, items: [] };
    entry.items.push(item);
    lines.set(key, entry);
  };
  const name = (pod: string) => (rows.pods.get(pod) as PodRow).name;
  for (const b of result.binds) add(b.job, "pods.bound", "placed", `${name(b.pod)}→${b.node}`);
  for (const p of result.pipelines.filter((x) => changed.has(x.pod)))
    add(p.job, "pods.pipelined", "pipelined (waiting for resources being freed)", `${name(p.pod)}→${p.node}`);
  for (const e of result.evictions)
    add(e.job, "pods.evicted", "evicting", `${name(e.pod)} on ${e.node}: ${e.message}`);
  return [...lines.values()].map((l) => {
    const job = rows.jobs.get(l.job)!;
    const shown =
      l.items.slice(0, 20).join(", ") + (l.items.length > 20 ? `, … (${l.items.length} in all)` : "");
    return {
      kind: l.kind,
      job: l.job,
      queue: job.queueName,
      cluster,
      message: `job ${job.name}: ${l.verb} ${shown}`,
    };
  });
}
