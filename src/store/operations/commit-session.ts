// The committer: a session result → pod states, BindRequests, job outcomes and events. Planned
// from the snapshot's rows without a read (commit-plan.ts), then written in ONE transaction that
// first checks the cluster's generation against the snapshot's (and bumps it), so a result
// computed on a stale snapshot is refused whole, never half-applied. Only what the session
// changed is written, each kind in one set-based statement.
import type { SessionResult } from "../../core/index.js";
import type { Tx } from "../db.js";
import { isFinished } from "../domain/job-state.js";
import { StaleSnapshotError } from "../errors.js";
import type { RecordEvent } from "../events.js";
import { type CreatedBindRequest, createBindRequests } from "./bind-request-rows.js";
import type { Job, PodState } from "../types.js";
import type { SnapshotRows } from "../snapshot/rows.js";
import { type Actor, type Store, transact } from "../store.js";
import { bumpGeneration, lockCluster } from "./cluster-fence.js";
import { checkLease } from "./cluster-leases.js";
import { type CommitPlan, planCommit } from "./commit-plan.js";
import { type RefreshedJob, refreshJobs } from "./job-refresh.js";
import { writePodChanges } from "./pod-changes.js";

export interface CommitResult {
  /** The cluster's generation after the commit. */
  generation: number;
  /** New BindRequests (state PENDING) to dispatch, binds before evictions in result order. */
  bindRequests: CreatedBindRequest[];
  /** Jobs whose state changed. */
  jobs: RefreshedJob[];
}

const SCHEDULER: Actor = { name: "scheduler" };

/** `rows` are the rows the snapshot of `seenGeneration` was built from (LoadedSnapshot.rows). */
export async function commitSession(
  store: Store,
  cluster: string,
  seenGeneration: number,
  result: SessionResult,
  rows: SnapshotRows,
  opts: {
    now?: Date;
    actor?: Actor;
    /** The lease the session was planned under: refused (LeaseLostError) unless still current. */
    lease?: { owner: string; epoch: number };
  } = {},
): Promise<CommitResult> {
  const now = opts.now ?? new Date();
  const plan = planCommit(cluster, result, rows);
  return transact(
    store,
    opts.actor ?? SCHEDULER,
    async (tx, record) => {
      const fence = await lockCluster(tx, cluster);
      if (!fence || fence.generation !== seenGeneration) {
        throw new StaleSnapshotError(cluster, seenGeneration, fence?.generation ?? null);
      }
      if (opts.lease) await checkLease(tx, cluster, opts.lease);
      const current = await lockJobs(tx, plan);
      const allowed = withoutRefusedJobs(plan, current, rows, cluster);
      return writeCommitPlan(tx, cluster, fence.generation, allowed, now, record);
    },
    { timeout: 120_000 },
  );
}

type LockedJob = Pick<Job, "id" | "state" | "clusterName">;

/** Locks the rows of the jobs the plan changes and reads their current state: a cancel that
 * committed meanwhile is seen here, and one still running waits for this commit. */
async function lockJobs(tx: Tx, plan: CommitPlan): Promise<Map<string, LockedJob>> {
  const ids = [...new Set([...plan.pods.map((p) => p.job), ...plan.jobs.keys()])];
  if (!ids.length) return new Map();
  const rows = await tx.$queryRaw<LockedJob[]>`
    SELECT id::text AS id, state::text AS state, cluster_name AS "clusterName"
    FROM job WHERE id = ANY(${ids}::uuid[]) ORDER BY id FOR UPDATE`;
  return new Map(rows.map((j) => [j.id, j]));
}

const PLACED: readonly PodState[] = ["BINDING", "PIPELINED"];

/**
 * No placement for a pod of a finished (cancelled) job; nothing at all for a job the rows no
 * longer describe (finished, or moved to another cluster, after the snapshot was read): its pods
 * may have changed without the cluster's generation moving.
 */
function withoutRefusedJobs(
  plan: CommitPlan,
  current: ReadonlyMap<string, LockedJob>,
  rows: SnapshotRows,
  cluster: string,
): CommitPlan {
  const gone = (job: string) => {
    const now = current.get(job);
    const then = rows.jobs.get(job);
    return (
      !now || now.clusterName !== cluster || (isFinished(now.state) && !!then && !isFinished(then.state))
    );
  };
  const finished = (job: string) => isFinished(current.get(job)?.state ?? "CANCELLED");
  const refused = (job: string, placement: boolean) => gone(job) || (placement && finished(job));
  if (![...current.keys(), ...plan.jobs.keys()].some((job) => gone(job) || finished(job))) return plan;
  return {
    pods: plan.pods.filter((p) => !refused(p.job, PLACED.includes(p.state))),
    requests: plan.requests.filter((r) => !refused(r.jobId, r.kind === "BIND")),
    events: plan.events.filter((e) => !refused(e.job!, e.kind !== "pods.evicted")),
    jobs: new Map([...plan.jobs].filter(([job]) => !gone(job))),
  };
}

async function writeCommitPlan(
  tx: Tx,
  cluster: string,
  generation: number,
  plan: CommitPlan,
  now: Date,
  record: RecordEvent,
): Promise<CommitResult> {
  let bindRequests: CreatedBindRequest[] = [];
  if (plan.pods.length) {
    await writePodChanges(tx, plan.pods, now);
    generation = await bumpGeneration(tx, cluster);
    bindRequests = await createBindRequests(tx, plan.requests, generation);
    for (const e of plan.events) record(e);
  }
  const jobs = await refreshJobs(tx, [...plan.jobs.keys()], now, record, plan.jobs);
  return { generation, bindRequests, jobs };
}
