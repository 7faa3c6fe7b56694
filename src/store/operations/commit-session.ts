// The committer: a session result → pod states, BindRequests, job outcomes and events, in ONE
// transaction that first checks the cluster's generation against the snapshot's (and bumps it),
// so a result computed on a stale snapshot is refused whole, never half-applied.
import type { PodStatus } from "../../core/api/spec.js";
import type { SessionResult } from "../../core/api/result.js";
import { RESOURCE_HOLDING_POD_STATES } from "../domain/job-state.js";
import { pendingReasonFromOutcome } from "../domain/pending-reason.js";
import { StaleSnapshotError } from "../errors.js";
import type { BindRequest } from "../generated/prisma/client.js";
import type { PodState } from "../generated/prisma/enums.js";
import { type Actor, type Store, transact } from "../store.js";
import { createBindRequests, type NewBindRequest } from "./bind-request-rows.js";
import { bumpGeneration, lockCluster } from "./cluster-fence.js";
import { type JobNotes, type RefreshedJob, refreshJobs } from "./job-refresh.js";
import { type PodChange, writePodChanges } from "./pod-changes.js";

export interface CommitResult {
  /** The cluster's generation after the commit. */
  generation: number;
  /** New BindRequests (state PENDING) to dispatch, binds before evictions in result order. */
  bindRequests: BindRequest[];
  /** Jobs whose state changed. */
  jobs: RefreshedJob[];
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

const HOLDS_NODE: readonly PodState[] = [
  "PIPELINED",
  "BINDING",
  "RUNNING",
  "RELEASING",
  "SUCCEEDED",
  "FAILED",
];

const SCHEDULER: Actor = { name: "scheduler" };

export async function commitSession(
  store: Store,
  cluster: string,
  seenGeneration: number,
  result: SessionResult,
  opts: { now?: Date; actor?: Actor } = {},
): Promise<CommitResult> {
  const now = opts.now ?? new Date();
  return transact(
    store,
    opts.actor ?? SCHEDULER,
    async (tx, record) => {
      const fence = await lockCluster(tx, cluster);
      if (!fence || fence.generation !== seenGeneration) {
        throw new StaleSnapshotError(cluster, seenGeneration, fence?.generation ?? null);
      }

      // Final state of every pod the session touched: placements first, then the session's own
      // final statuses (authoritative when present).
      const finals = new Map<
        string,
        { job: string; status: PodStatus; node: string | null; gpuGroups: string[] }
      >();
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
      // Devices the core chose for whole-GPU pods it bound (on nodes that report their devices).
      const boundDevices = new Map(result.binds.map((b) => [b.pod, b.gpuDevices ?? []]));
      // A pod the session both bound to and evicted from one node (allocate placed it, a later
      // action took it back): the two requests cancel out and neither goes to the agent, which
      // could otherwise carry them out in either order.
      const evictedFrom = new Map(result.evictions.map((e) => [e.pod, e.node]));
      const takenBack = new Set(
        result.binds.filter((b) => evictedFrom.get(b.pod) === b.node).map((b) => b.pod),
      );

      // Every pod named must belong to a job on this cluster (ids from this cluster's snapshot).
      const jobIds = [
        ...new Set([...result.jobs.map((j) => j.uid), ...[...finals.values()].map((f) => f.job)]),
      ];
      const jobs = new Map(
        (
          await tx.job.findMany({
            where: { id: { in: jobIds } },
            select: { id: true, name: true, queueName: true, clusterName: true },
          })
        ).map((j) => [j.id, j]),
      );
      const podRows = new Map(
        (
          await tx.pod.findMany({
            where: { id: { in: [...finals.keys()] } },
            select: {
              id: true,
              jobId: true,
              name: true,
              state: true,
              nodeName: true,
              message: true,
              gpuDevices: true,
            },
          })
        ).map((p) => [p.id, p]),
      );
      for (const [podId, f] of finals) {
        const pod = podRows.get(podId);
        if (!pod || pod.jobId !== f.job || jobs.get(f.job)?.clusterName !== cluster) {
          throw new Error(
            `session result names pod ${podId} of job ${f.job}, which is not on cluster ${cluster}`,
          );
        }
      }
      const evictionReason = new Map(result.evictions.map((e) => [e.pod, e.message]));
      const changes: PodChange[] = [];
      for (const [podId, f] of finals) {
        let state = STORED_STATE[f.status];
        if (!state) throw new Error(`session result gives pod ${podId} the unknown status ${f.status}`);
        const pod = podRows.get(podId)!;
        let node = HOLDS_NODE.includes(state) ? f.node : null;
        if (takenBack.has(podId)) {
          // Already on that node before the session (evicted, then placed there again): it stays.
          if (pod.nodeName === evictedFrom.get(podId) && RESOURCE_HOLDING_POD_STATES.includes(pod.state))
            continue;
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
        changes.push({ id: podId, state, node, gpuGroups: f.gpuGroups, gpuDevices, message });
      }
      // A pipelined nomination lives for one session: pipelined pods this session did not
      // pipeline again go back to plain PENDING.
      const expired = (
        await tx.pod.findMany({
          where: { state: "PIPELINED", job: { clusterName: cluster } },
          select: { id: true, jobId: true },
        })
      ).filter((p) => !finals.has(p.id));
      for (const p of expired)
        changes.push({
          id: p.id,
          state: "PENDING",
          node: null,
          gpuGroups: [],
          gpuDevices: [],
          message: null,
        });

      // What goes to the cluster: the placements and evictions that did not cancel out.
      const sent = {
        ...result,
        binds: result.binds.filter((b) => !takenBack.has(b.pod)),
        evictions: result.evictions.filter((e) => !takenBack.has(e.pod)),
      };
      let generation = fence.generation;
      let bindRequests: BindRequest[] = [];
      if (changes.length) {
        await writePodChanges(tx, changes, now);
        generation = await bumpGeneration(tx, cluster);
        const requests: NewBindRequest[] = [
          ...sent.binds.map(
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
          ...sent.evictions.map(
            (e): NewBindRequest => ({
              kind: "EVICT",
              cluster,
              jobId: e.job,
              podId: e.pod,
              node: e.node,
              gpuGroups: finals.get(e.pod)?.gpuGroups ?? [],
              gpuDevices: podRows.get(e.pod)?.gpuDevices ?? [],
              reason: e.message,
            }),
          ),
        ];
        bindRequests = await createBindRequests(tx, requests, generation);
        recordPlacementEvents(sent, new Set(changes.map((c) => c.id)), jobs, podRows, cluster, record);
      }

      const notes = new Map<string, JobNotes>();
      for (const o of result.jobs) {
        notes.set(o.uid, {
          pendingReason: pendingReasonFromOutcome(cluster, o),
          lastStartAt: o.lastStartAt === null ? null : new Date(o.lastStartAt),
          staleSince: o.staleSince === null ? null : new Date(o.staleSince),
        });
      }
      const touched = [...new Set([...jobIds, ...expired.map((p) => p.jobId)])];
      const refreshed = await refreshJobs(tx, touched, now, record, notes);
      return { generation, bindRequests, jobs: refreshed };
    },
    { timeout: 120_000 },
  );
}

/** One event per job and kind of placement (not per pod: a 1000-pod gang is one line). */
function recordPlacementEvents(
  result: SessionResult,
  changed: ReadonlySet<string>,
  jobs: Map<string, { name: string; queueName: string }>,
  pods: Map<string, { name: string }>,
  cluster: string,
  record: (e: { kind: string; message: string; job: string; queue: string; cluster: string }) => void,
): void {
  const lines = new Map<string, { kind: string; verb: string; items: string[] }>();
  const add = (job: string, kind: string, verb: string, item: string) => {
    const key = `${job}\u0000${kind}`;
    const entry = lines.get(key) ?? { kind, verb, items: [] };
    entry.items.push(item);
    lines.set(key, entry);
  };
  for (const b of result.binds) add(b.job, "pods.bound", "placed", `${pods.get(b.pod)?.name}→${b.node}`);
  for (const p of result.pipelines.filter((x) => changed.has(x.pod)))
    add(
      p.job,
      "pods.pipelined",
      "pipelined (waiting for resources being freed)",
      `${pods.get(p.pod)?.name}→${p.node}`,
    );
  for (const e of result.evictions)
    add(e.job, "pods.evicted", "evicting", `${pods.get(e.pod)?.name} on ${e.node}: ${e.message}`);
  for (const [key, l] of lines) {
    const jobId = key.split("\u0000")[0]!;
    const job = jobs.get(jobId)!;
    const shown =
      l.items.slice(0, 20).join(", ") + (l.items.length > 20 ? `, … (${l.items.length} in all)` : "");
    record({
      kind: l.kind,
      job: jobId,
      queue: job.queueName,
      cluster,
      message: `job ${job.name}: ${l.verb} ${shown}`,
    });
  }
}
