// The SQL reader behind every snapshot: one REPEATABLE READ transaction per read (a consistent
// view), compact array rows with only the columns the snapshot needs, decoded into records.
// On PostgreSQL it goes through the pg pool directly (rows as arrays: no per-row objects); on
// PGlite through Prisma's raw queries. Every change-tracked table carries `change_xid` (the
// transaction that last wrote the row): a delta read returns what changed since a cursor.
import { type PrismaClient, poolOf } from "../db.js";
import { RESOURCE_HOLDING_POD_STATES, UNFINISHED_JOB_STATES } from "../domain/job-state.js";
import { DEFAULT_QUOTA_SCOPE } from "../domain/quotas.js";
import type { UsageBucket } from "../domain/usage.js";
import type { JobState, PodState, QuotaResource } from "../types.js";
import type { JobRecord, NodeRecord, PodRecord, QueueRecord, QuotaRecord, TaskRecord } from "./records.js";

/** One statement of a consistent read: positional parameters, rows as arrays. */
export type Query = (sql: string, params: readonly unknown[]) => Promise<unknown[][]>;

const statementNames = new Map<string, string>();
const statementName = (sql: string): string => {
  let name = statementNames.get(sql);
  if (!name) {
    name = `fqr${statementNames.size}`;
    statementNames.set(sql, name);
  }
  return name;
};

/** Runs `fn` in one read-only REPEATABLE READ transaction. */
export async function readConsistent<T>(prisma: PrismaClient, fn: (q: Query) => Promise<T>): Promise<T> {
  const pool = poolOf(prisma);
  if (!pool) {
    return prisma.$transaction(
      (tx) =>
        fn(async (sql, params) =>
          (await tx.$queryRawUnsafe<Record<string, unknown>[]>(sql, ...params)).map((r) => Object.values(r)),
        ),
      { isolationLevel: "RepeatableRead", timeout: 60_000 },
    );
  }
  const client = await pool.connect();
  // A connection cut while held here between two queries (PostgreSQL restarted, the backend
  // terminated) says so by an 'error' event: unheard, it would end the process. The next query
  // fails instead, and the broken connection is not given back to the pool.
  let lost: Error | undefined;
  const onError = (err: Error) => {
    lost = err;
  };
  client.on("error", onError);
  try {
    await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    const out = await fn(
      async (text, values) =>
        (await client.query({ name: statementName(text), text, values: [...values], rowMode: "array" })).rows,
    );
    await client.query("COMMIT");
    return out;
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {});
    throw err;
  } finally {
    client.off("error", onError);
    client.release(lost);
  }
}

/** Runs one statement on its own, outside any transaction: a statement reads one snapshot, so it
 * is as consistent as a transaction of that statement alone, without a transaction's round trips. */
export async function readStatement(
  prisma: PrismaClient,
  text: string,
  values: readonly unknown[],
): Promise<unknown[][]> {
  const pool = poolOf(prisma);
  if (!pool)
    return (await prisma.$queryRawUnsafe<Record<string, unknown>[]>(text, ...values)).map((r) =>
      Object.values(r),
    );
  return (await pool.query({ name: statementName(text), text, values: [...values], rowMode: "array" })).rows;
}

const list = (values: readonly string[]) => values.map((v) => `'${v}'`).join(", ");
/** A time as ms since the epoch, named after its column: on PGlite rows come back as objects
 * (Prisma's raw queries), so every selected column needs a name of its own. */
const ms = (column: string) =>
  `(extract(epoch from ${column}) * 1000)::float8 AS ${column.replace(/\W/g, "_")}_ms`;

/** Jobs of the cluster the scheduler must see: unfinished ones, and finished ones whose pods
 * still hold node resources (a cancelled job's pods until the agent confirms their eviction). */
const SNAPSHOT_JOB = `j.cluster_name = $1 AND (j.state IN (${list(UNFINISHED_JOB_STATES)})
  OR EXISTS (SELECT 1 FROM pod h WHERE h.job_id = j.id AND h.state IN (${list(RESOURCE_HOLDING_POD_STATES)})))`;

/** Where a read stands: its cursor for the next delta read, and the oldest cursor tombstones
 * still cover (a cursor at or below `prunedXid` may have missed deletions). */
export interface ReadPoint {
  cursor: bigint;
  prunedXid: bigint;
  /** The read's snapshot (pg_snapshot as text): the transactions whose writes it saw. */
  snapshot: string;
}

/** The statement's read point as three text columns named `names` (cursor, pruned, snapshot). */
const pointColumns = (names: readonly [string, string, string]) =>
  `pg_snapshot_xmin(pg_current_snapshot())::text AS ${names[0]},
   (SELECT pruned_xid::text FROM change_horizon WHERE id = 1) AS ${names[1]},
   pg_current_snapshot()::text AS ${names[2]}`;

/** The read point from the three columns of `pointColumns`. */
const pointOf = (cursor: unknown, pruned: unknown, snapshot: unknown): ReadPoint => ({
  cursor: BigInt(cursor as string),
  prunedXid: BigInt((pruned as string | null) ?? "0"),
  snapshot: snapshot as string,
});

export async function readPoint(q: Query): Promise<ReadPoint> {
  const [row] = await q(`SELECT ${pointColumns(["xmin", "pruned", "snapshot"])}`, []);
  return pointOf(row![0], row![1], row![2]);
}

export interface ClusterRecord {
  generation: number;
  cordoned: boolean;
}

export async function readCluster(q: Query, cluster: string): Promise<ClusterRecord | null> {
  const [row] = await q("SELECT generation::text, cordoned FROM cluster WHERE name = $1", [cluster]);
  return row ? { generation: Number(row[0]), cordoned: row[1] as boolean } : null;
}

const NODE_COLUMNS = `name, labels, taints, unschedulable, ready, cpu_millis, memory::float8, gpus, gpu_memory,
  max_pods, gpu_model, gpu_devices`;

const nodeRecord = (r: unknown[]): NodeRecord => ({
  name: r[0] as string,
  labels: r[1] as Record<string, string>,
  taints: r[2] as unknown[],
  unschedulable: r[3] as boolean,
  ready: r[4] as boolean,
  cpuMillis: r[5] as number,
  memory: r[6] as number,
  gpus: r[7] as number,
  gpuMemory: r[8] as number,
  maxPods: r[9] as number,
  gpuModel: r[10] as string | null,
  gpuDevices: r[11] as unknown[],
});

export async function readNodes(q: Query, cluster: string, since?: bigint): Promise<NodeRecord[]> {
  const rows =
    since === undefined
      ? await q(`SELECT ${NODE_COLUMNS} FROM node WHERE cluster_name = $1 ORDER BY name`, [cluster])
      : await q(`SELECT ${NODE_COLUMNS} FROM node WHERE cluster_name = $1 AND change_xid >= $2::text::xid8`, [
          cluster,
          since.toString(),
        ]);
  return rows.map(nodeRecord);
}

export async function readQueues(
  q: Query,
  cluster: string,
): Promise<{ queues: QueueRecord[]; quotas: QuotaRecord[] }> {
  const queues = await q(
    `SELECT name, parent_name, priority, ${ms("created_at")} FROM queue ORDER BY created_at, name`,
    [],
  );
  const quotas = await q(
    `SELECT queue_name, scope, resource::text, deserved, "limit", over_quota_weight FROM queue_quota
     WHERE scope IN ($1, $2)`,
    [DEFAULT_QUOTA_SCOPE, cluster],
  );
  return {
    queues: queues.map((r) => ({
      name: r[0] as string,
      parentName: r[1] as string | null,
      priority: r[2] as number,
      createdAt: r[3] as number,
    })),
    quotas: quotas.map((r) => ({
      queueName: r[0] as string,
      scope: r[1] as string,
      resource: r[2] as QuotaResource,
      deserved: r[3] as number | null,
      limit: r[4] as number | null,
      overQuotaWeight: r[5] as number | null,
    })),
  };
}

const JOB_COLUMNS = `j.id::text, j.name, j.namespace, j.queue_name, j.cluster_name, j.state::text, j.priority,
  j.preemptible, j.min_member, j.sub_groups, j.topology, ${ms("j.created_at")}, ${ms("j.last_start_at")},
  ${ms("j.stale_since")}, j.pending_reason, j.restart_after IS NOT NULL`;

const jobRecord = (r: unknown[]): JobRecord => ({
  id: r[0] as string,
  name: r[1] as string,
  namespace: r[2] as string,
  queueName: r[3] as string,
  clusterName: r[4] as string | null,
  state: r[5] as JobState,
  priority: r[6] as number,
  preemptible: r[7] as boolean,
  minMember: r[8] as number,
  subGroups: r[9] as JobRecord["subGroups"],
  topology: r[10] as JobRecord["topology"],
  createdAt: r[11] as number,
  lastStartAt: r[12] as number | null,
  staleSince: r[13] as number | null,
  pendingReason: (r[14] ?? null) as JobRecord["pendingReason"],
  held: r[15] as boolean,
});

const taskRecord = (r: unknown[]): TaskRecord => ({
  jobId: r[0] as string,
  name: r[1] as string,
  subGroup: r[2] as string | null,
  nodeSelector: r[3] as TaskRecord["nodeSelector"],
  gpuModel: r[4] as string | null,
});

const POD_COLUMNS = `p.id::text, p.job_id::text, p.task_name, p.name, p.state::text, p.node_name, p.gpu_groups,
  p.gpu_devices, p.message, p.cpu_millis, p.memory::float8, p.gpus, p.gpu_fraction, p.gpu_memory,
  ${ms("p.created_at")}`;

const podRecord = (r: unknown[]): PodRecord => ({
  id: r[0] as string,
  jobId: r[1] as string,
  taskName: r[2] as string,
  name: r[3] as string,
  state: r[4] as PodState,
  nodeName: r[5] as string | null,
  gpuGroups: r[6] as string[],
  gpuDevices: r[7] as number[],
  message: r[8] as string | null,
  cpuMillis: r[9] as number,
  memory: r[10] as number,
  gpus: r[11] as number,
  gpuFraction: r[12] as number,
  gpuMemory: r[13] as number,
  createdAt: r[14] as number,
});

export interface JobRows {
  jobs: JobRecord[];
  tasks: TaskRecord[];
  pods: PodRecord[];
}

/** The cluster's snapshot jobs (all, or those of `ids`), in snapshot order, with their tasks and pods. */
export async function readJobs(q: Query, cluster: string, ids?: readonly string[]): Promise<JobRows> {
  const where = ids ? `${SNAPSHOT_JOB} AND j.id = ANY($2::uuid[])` : SNAPSHOT_JOB;
  const params = ids ? [cluster, ids] : [cluster];
  const jobs = await q(`SELECT ${JOB_COLUMNS} FROM job j WHERE ${where} ORDER BY j.created_at, j.id`, params);
  const tasks = await q(
    `SELECT t.job_id::text, t.name, t.sub_group, t.node_selector, t.gpu_model
     FROM job_task t JOIN job j ON j.id = t.job_id WHERE ${where}`,
    params,
  );
  const pods = await q(
    `SELECT ${POD_COLUMNS} FROM pod p JOIN job j ON j.id = p.job_id WHERE ${where}`,
    params,
  );
  return { jobs: jobs.map(jobRecord), tasks: tasks.map(taskRecord), pods: pods.map(podRecord) };
}

/** Everything of the cluster written since `since`: which queues, nodes and jobs to read again. */
export interface ChangeSet {
  queues: boolean;
  nodes: string[];
  removedNodes: string[];
  jobs: string[];
}

/** The start of a delta read: where it stands, the cluster row, and what changed. */
export interface DeltaHead {
  point: ReadPoint;
  cluster: ClusterRecord | null;
  changes: ChangeSet;
}

/**
 * The first statement of a delta read, in one round trip: the read point (as `readPoint`, whose
 * snapshot this statement takes for the transaction), the cluster row, and the changes since
 * `since` (a cursor) of transactions `seen` (the snapshot of the read the cursor came from)
 * could not see — the others that read has applied already. One row per fact, tagged by its kind.
 */
export async function readDeltaHead(
  q: Query,
  cluster: string,
  since: bigint,
  seen: string,
): Promise<DeltaHead> {
  const after = (column: string) =>
    `${column} >= $2::text::xid8 AND NOT pg_visible_in_snapshot(${column}, $3::text::pg_snapshot)`;
  const rows = await q(
    `SELECT 'point' AS kind, ${pointColumns(["a", "b", "c"])}
     UNION ALL SELECT 'cluster', generation::text, cordoned::text, NULL FROM cluster WHERE name = $1
     UNION ALL SELECT 'queues', (EXISTS (SELECT 1 FROM queue WHERE ${after("change_xid")})
         OR EXISTS (SELECT 1 FROM queue_quota WHERE ${after("change_xid")} AND scope IN ('${DEFAULT_QUOTA_SCOPE}', $1))
         OR EXISTS (SELECT 1 FROM change_tombstone WHERE ${after("change_xid")}
                      AND table_name IN ('queue', 'queue_quota')))::text, NULL, NULL
     UNION ALL SELECT 'node', name, NULL, NULL FROM node WHERE cluster_name = $1 AND ${after("change_xid")}
     UNION ALL SELECT 'removed-node', key, NULL, NULL FROM change_tombstone
       WHERE ${after("change_xid")} AND table_name = 'node' AND cluster_name = $1
     UNION ALL SELECT 'job', id, NULL, NULL FROM (
       SELECT id::text FROM job WHERE cluster_name = $1 AND ${after("change_xid")}
       UNION SELECT p.job_id::text FROM pod p JOIN job j ON j.id = p.job_id
         WHERE ${after("p.change_xid")} AND j.cluster_name = $1
       UNION SELECT t.job_id::text FROM job_task t JOIN job j ON j.id = t.job_id
         WHERE ${after("t.change_xid")} AND j.cluster_name = $1
       UNION SELECT job_id::text FROM change_tombstone
         WHERE ${after("change_xid")} AND job_id IS NOT NULL AND (cluster_name = $1 OR cluster_name IS NULL)) x`,
    [cluster, since.toString(), seen],
  );
  const head: DeltaHead = {
    point: { cursor: 0n, prunedXid: 0n, snapshot: "" },
    cluster: null,
    changes: { queues: false, nodes: [], removedNodes: [], jobs: [] },
  };
  for (const [kind, a, b, c] of rows as [string, string | null, string | null, string | null][]) {
    if (kind === "point") head.point = pointOf(a, b, c);
    else if (kind === "cluster") head.cluster = { generation: Number(a), cordoned: b === "true" };
    else if (kind === "queues") head.changes.queues = a === "true";
    else if (kind === "node") head.changes.nodes.push(a!);
    else if (kind === "removed-node") head.changes.removedNodes.push(a!);
    else head.changes.jobs.push(a!);
  }
  return head;
}

/** Per cluster read with `readChangedClusters`: its cluster row, and whether a row of it (or a
 * queue or quota) was written by a transaction the earlier read could not see. */
export interface ClusterChanged {
  cluster: ClusterRecord | null;
  changed: boolean;
}

/**
 * For many clusters at once, in one statement, each against an earlier read of it (its cursor and
 * its snapshot, from `readPoint`): what `readCluster` returns, and whether any row `readChanges`
 * looks at was written by a transaction that read could not see (a job's pod or task tombstone
 * counting when the job is on the cluster). Rows that read saw are not changes, even when their
 * transaction is past its cursor (the cursor lags behind any transaction still open). Also returns
 * the statement's own read point (what `readPoint` would return in a transaction of it).
 */
export async function readChangedClusters(
  prisma: PrismaClient,
  clusters: readonly { name: string; since: bigint; snapshot: string }[],
): Promise<{ point: ReadPoint; found: Map<string, ClusterChanged> } | null> {
  if (!clusters.length) return null;
  // Each table is scanned once for all clusters from the oldest cursor ($4, a plain parameter:
  // the change_xid indexes serve it), each row then held against its cluster's cursor and snapshot.
  const unseen = (column: string) =>
    `${column} >= $4::text::xid8 AND ${column} >= c.since AND NOT pg_visible_in_snapshot(${column}, c.seen)`;
  const oldest = clusters.reduce((m, c) => (c.since < m ? c.since : m), clusters[0]!.since);
  const rows = await readStatement(
    prisma,
    `WITH c AS (
       SELECT name, since::xid8 AS since, seen::pg_snapshot AS seen
       FROM unnest($1::text[], $2::text[], $3::text[]) AS u(name, since, seen)),
     changed AS (
       SELECT c.name FROM c WHERE EXISTS (SELECT 1 FROM queue WHERE ${unseen("change_xid")})
       UNION SELECT c.name FROM c JOIN queue_quota x ON x.scope IN ('${DEFAULT_QUOTA_SCOPE}', c.name)
         WHERE ${unseen("x.change_xid")}
       UNION SELECT c.name FROM node n JOIN c ON c.name = n.cluster_name
         WHERE n.cluster_name = ANY($1::text[]) AND ${unseen("n.change_xid")}
       UNION SELECT c.name FROM job j JOIN c ON c.name = j.cluster_name
         WHERE j.cluster_name = ANY($1::text[]) AND ${unseen("j.change_xid")}
       UNION SELECT c.name FROM pod p JOIN job j ON j.id = p.job_id JOIN c ON c.name = j.cluster_name
         WHERE ${unseen("p.change_xid")}
       UNION SELECT c.name FROM job_task t JOIN job j ON j.id = t.job_id JOIN c ON c.name = j.cluster_name
         WHERE ${unseen("t.change_xid")}
       UNION SELECT c.name FROM change_tombstone t JOIN c
           ON t.cluster_name = c.name OR (t.cluster_name IS NULL AND t.job_id IS NULL)
             OR (t.cluster_name IS NULL AND EXISTS (SELECT 1 FROM job j
                   WHERE j.id = t.job_id AND j.cluster_name = c.name))
         WHERE ${unseen("t.change_xid")})
     SELECT c.name, k.generation::text, k.cordoned, c.name IN (SELECT name FROM changed),
       ${pointColumns(["xmin", "pruned", "snapshot"])}
     FROM c LEFT JOIN cluster k ON k.name = c.name`,
    [
      clusters.map((c) => c.name),
      clusters.map((c) => c.since.toString()),
      clusters.map((c) => c.snapshot),
      oldest.toString(),
    ],
  );
  const first = rows[0]!;
  return {
    point: pointOf(first[4], first[5], first[6]),
    found: new Map(
      rows.map((r) => [
        r[0] as string,
        {
          cluster: r[1] === null ? null : { generation: Number(r[1]), cordoned: r[2] as boolean },
          changed: r[3] as boolean,
        },
      ]),
    ),
  };
}

/** Cheap totals to compare with what a cache holds (drift check). */
export interface ClusterCounts {
  nodes: number;
  jobs: number;
  pods: number;
}

export async function readCounts(q: Query, cluster: string): Promise<ClusterCounts> {
  const [row] = await q(
    `SELECT (SELECT count(*) FROM node WHERE cluster_name = $1)::int AS nodes,
            (SELECT count(*) FROM job j WHERE ${SNAPSHOT_JOB})::int AS jobs,
            (SELECT count(*) FROM pod p JOIN job j ON j.id = p.job_id WHERE ${SNAPSHOT_JOB})::int AS pods`,
    [cluster],
  );
  return { nodes: row![0] as number, jobs: row![1] as number, pods: row![2] as number };
}

/** The cluster's usage buckets since `from` (ms), per queue. */
export async function readUsage(
  q: Query,
  cluster: string,
  from: number,
): Promise<Map<string, UsageBucket[]>> {
  const rows = await q(
    `SELECT queue_name, ${ms("bucket_start")}, gpu_seconds, cpu_milli_seconds, memory_byte_seconds
     FROM queue_usage WHERE cluster_name = $1 AND bucket_start >= to_timestamp($2::float8 / 1000) AT TIME ZONE 'UTC'`,
    [cluster, from],
  );
  const out = new Map<string, UsageBucket[]>();
  for (const r of rows) {
    const b: UsageBucket = {
      bucketStart: new Date(r[1] as number),
      gpuSeconds: r[2] as number,
      cpuMilliSeconds: r[3] as number,
      memoryByteSeconds: r[4] as number,
    };
    const queue = r[0] as string;
    const l = out.get(queue);
    if (l) l.push(b);
    else out.set(queue, [b]);
  }
  return out;
}
