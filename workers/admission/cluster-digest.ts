// What admission needs of a cluster, computed from one snapshot of it: its nodes with what holds
// resources there compacted (one pod per node, compact.ts), the pods its own cycle would place now
// placed (a dry run), what waits there, and the sums a pass starts from. Plain data: the worker
// that owns the cluster computes it from its cached view and hands it to the admission pass, which
// keeps only these digests, never a second copy of every cluster's rows.
import {
  holdsNode,
  type NodeSpec,
  type Placement,
  type PodGroupSpec,
  type QueueSpec,
  runSession,
  type SchedulerConfig,
  SessionCarry,
  type Snapshot,
} from "../../src/core/index.js";
import { admissionDryRunsTotal } from "../metrics.js";
import { type Amounts, add, type NodeRoom, nodeAmounts, podAmounts, positive, sub, zero } from "./amounts.js";
import { capacityNode, compactHeld, HELD_JOB } from "./compact.js";

/** The digest's shape: a pass takes digests of its own shape only (owners may run another version). */
export const DIGEST_FORMAT = 2;

export interface ClusterDigest {
  format: typeof DIGEST_FORMAT;
  /** The cluster without its jobs: nodes, queues as configured, topologies. */
  shell: Snapshot;
  /** The nodes with what holds resources there compacted, the pods the cluster would place now
   * included: every dry run starts from it. */
  compact: Snapshot;
  /** The pods that wait and that the cluster cannot place now (demand for fair shares). */
  pending: PodGroupSpec[];
  /** For fair shares: the queue jobs left holding nodes once their plain pods are folded into their
   * queues too, and those queues. */
  shareJobs: PodGroupSpec[];
  shareQueues: QueueSpec[];
  /** Per queue: what waits here that the cluster cannot place now. */
  waitingByQueue: [string, Amounts][];
  /** Pending pods waiting on this cluster. */
  backlog: Amounts;
  /** Per queue, what its pods hold or wait for. */
  queueDemand: [string, Amounts][];
  /** Ready nodes' capacity. */
  capacity: Amounts;
  /** Free on ready, schedulable nodes, waiting pods taking nothing (the score subtracts `backlog`). */
  unheld: Amounts;
  /** Free on ready, schedulable nodes once the pods the cluster would place now hold theirs too. */
  unclaimed: Amounts;
  /** Per node what `compact` leaves free (what `unclaimed` sums over the ready, schedulable ones). */
  unclaimedByNode: [string, NodeRoom][];
  /** The largest of the ready, schedulable nodes' allocatable, per resource. */
  largestNode: Amounts;
  /** The ready nodes' total as one node. */
  capacityNode: NodeSpec;
  /** The nodes and queues as configured (equal: the same empty-cluster answers). */
  fingerprint: string;
}

export const allocateOnly = (config: SchedulerConfig): SchedulerConfig => ({
  ...config,
  actions: ["allocate"],
});

/** A job reduced to the pods that hold node resources: it takes space, asks for nothing. */
export function heldOnly(job: PodGroupSpec): PodGroupSpec | null {
  const pods = job.pods.filter((p) => holdsNode(p.status));
  if (!pods.length) return null;
  return {
    ...job,
    minMember: pods.length,
    subGroups: [],
    topology: null,
    pods: pods.map((p) => ({ ...p, subGroup: null })),
  };
}

/** The job with the placed pods holding their nodes (status Binding, node and devices set). */
export function withPlacements(
  job: PodGroupSpec,
  where: ReadonlyMap<string, Placement> | undefined,
): PodGroupSpec {
  if (!where?.size) return job;
  return {
    ...job,
    pods: job.pods.map((p) => {
      const b = where.get(p.uid);
      if (!b) return p;
      const devices = b.gpuDevices?.length ? { gpuDevices: b.gpuDevices } : {};
      return { ...p, status: "Binding", node: b.node, gpuGroups: b.gpuGroups, ...devices };
    }),
  };
}

/** The job's pods that wait (Pending), or null when none does. */
function pendingOnly(job: PodGroupSpec): PodGroupSpec | null {
  const pods = job.pods.filter((p) => p.status === "Pending");
  return pods.length ? { ...job, pods } : null;
}

const hasPending = (j: PodGroupSpec) => j.pods.some((p) => p.status === "Pending");

/** Per job, where an allocate dry run places the waiting jobs' pending pods on `compact` (the
 * jobs with nothing waiting, compacted). */
function reservations(
  compact: Snapshot,
  waiting: readonly PodGroupSpec[],
  config: SchedulerConfig,
  carry: SessionCarry,
): Map<string, Map<string, Placement>> {
  const out = new Map<string, Map<string, Placement>>();
  if (!waiting.length) return out;
  admissionDryRunsTotal.inc({ kind: "reserve" });
  for (const b of runSession({ ...compact, jobs: [...compact.jobs, ...waiting] }, config, { carry }).binds) {
    const m = out.get(b.job) ?? new Map<string, Placement>();
    m.set(b.pod, b);
    out.set(b.job, m);
  }
  return out;
}

/** Per node, what the compact snapshot's pods leave. */
function unclaimedByNode(compact: Snapshot): Map<string, NodeRoom> {
  const room = new Map<string, NodeRoom>(
    compact.nodes.map((n) => [
      n.name,
      {
        gpu: n.allocatable.gpus,
        cpuMillis: n.allocatable.cpuMillis,
        memory: n.allocatable.memory,
        pods: n.allocatable.pods,
      },
    ]),
  );
  for (const job of compact.jobs)
    for (const p of job.pods) {
      const r = p.node ? room.get(p.node) : undefined;
      if (!r || !holdsNode(p.status)) continue;
      const a = podAmounts(p);
      r.cpuMillis -= a.cpuMillis;
      r.memory -= a.memory;
      r.gpu -= a.gpu;
      r.pods -= 1;
    }
  return room;
}

/** In one walk over the pods: what they hold per node, what waits (backlog), and per queue what
 * its pods hold or wait for. */
function tallyPods(snapshot: Snapshot) {
  const used = new Map<string, Amounts>();
  const backlog = zero();
  const demand = new Map<string, Amounts>();
  for (const job of snapshot.jobs) {
    const d = demand.get(job.queue) ?? zero();
    demand.set(job.queue, d);
    for (const p of job.pods) {
      const a = podAmounts(p);
      d.cpuMillis += a.cpuMillis;
      d.memory += a.memory;
      d.gpu += a.gpu;
      let on: Amounts | undefined;
      if (holdsNode(p.status) && p.node) {
        on = used.get(p.node) ?? zero();
        used.set(p.node, on);
      } else if (p.status === "Pending") on = backlog;
      if (on) {
        on.gpu += a.gpu;
        on.cpuMillis += a.cpuMillis;
        on.memory += a.memory;
      }
    }
  }
  return { used, backlog, demand };
}

export function digestCluster(snapshot: Snapshot, config: SchedulerConfig): ClusterDigest {
  // Jobs already sent here but not placed yet get their room first: an allocate dry run of the
  // cluster as it is places what its own cycle would place, and those pods then hold their nodes
  // in every later dry run, so no job is told it fits on room they will take. Jobs with pods
  // waiting stay whole in that run (gangs); the others only take room and are compacted.
  const waiting = snapshot.jobs.filter(hasPending);
  const settled = compactHeld(
    snapshot,
    waiting.length ? snapshot.jobs.filter((j) => !hasPending(j)) : snapshot.jobs,
  );
  const reserved = reservations(settled, waiting, allocateOnly(config), new SessionCarry());
  const present = waiting.map((j) => withPlacements(j, reserved.get(j.uid)));
  const heldOfWaiting = present.map(heldOnly).filter((j): j is PodGroupSpec => j !== null);
  const compact = { ...settled, jobs: [...settled.jobs, ...heldOfWaiting] };
  const pending = present.map(pendingOnly).filter((j): j is PodGroupSpec => j !== null);
  // The fair-share session has one job per uid: a job's waiting part (in `pending`, after it)
  // replaces its held part, so that part never counts and is left out. The other held parts
  // (pods the cluster would place now) count for their queues like the folded per-node pods.
  const waitingUids = new Set(pending.map((j) => j.uid));
  const counted = compact.jobs.filter((j) => j.uid !== HELD_JOB && !waitingUids.has(j.uid));
  const forShares = compactHeld({ ...compact, jobs: counted }, counted);
  // What waits here unplaced counts against its queue's headroom, like what a pass sends.
  const waitingByQueue = new Map<string, Amounts>();
  for (const job of pending)
    for (const p of job.pods)
      waitingByQueue.set(job.queue, add(waitingByQueue.get(job.queue) ?? zero(), podAmounts(p)));
  const tally = tallyPods(snapshot);
  const takers = snapshot.nodes.filter((n) => n.ready && !n.unschedulable);
  const takerAmounts = takers.map(nodeAmounts);
  const room = unclaimedByNode(compact);
  return {
    format: DIGEST_FORMAT,
    shell: { ...snapshot, jobs: [] },
    compact,
    pending,
    shareJobs: forShares.jobs.filter((j) => j.uid !== HELD_JOB),
    shareQueues: forShares.queues,
    waitingByQueue: [...waitingByQueue],
    backlog: tally.backlog,
    queueDemand: [...tally.demand],
    capacity: snapshot.nodes
      .filter((n) => n.ready)
      .map(nodeAmounts)
      .reduce(add, zero()),
    unheld: takers
      .map((n, i) => positive(sub(takerAmounts[i]!, tally.used.get(n.name) ?? zero())))
      .reduce(add, zero()),
    unclaimed: takers
      .map((n) => {
        const r = room.get(n.name);
        return r ? positive(r) : zero();
      })
      .reduce(add, zero()),
    unclaimedByNode: [...room],
    largestNode: {
      gpu: Math.max(0, ...takerAmounts.map((a) => a.gpu)),
      cpuMillis: Math.max(0, ...takerAmounts.map((a) => a.cpuMillis)),
      memory: Math.max(0, ...takerAmounts.map((a) => a.memory)),
    },
    capacityNode: capacityNode(snapshot.nodes),
    fingerprint: JSON.stringify([
      snapshot.nodes.map((n) => [
        n.name,
        n.labels,
        n.taints,
        n.unschedulable,
        n.ready,
        n.allocatable,
        n.gpuModel,
      ]),
      snapshot.queues.map((q) => ({ ...q, heldElsewhere: null })),
    ]),
  };
}
