// What must hold whatever fails, checked from the control plane's database and from what the
// simulated clusters really run (their state files and bind logs):
// - every accepted submission exists exactly once, and reaches a final or running state;
// - no pod started more often than the control plane asked, none on two nodes at once;
// - no node over-committed in any resource (CPU, memory, GPUs, GPU fractions, GPU memory,
//   devices), neither in the clusters nor in the control plane's own books;
// - no gang partly running beyond the staleness grace period;
// - no queue above its limit;
// - no pod held RUNNING that its cluster does not run;
// - no pod run by a cluster that the books do not hold on that cluster and node.
// A Watcher samples the transient ones all along; `settle` checks the rest once the load stopped.
import { existsSync, readFileSync } from "node:fs";
import pg from "pg";
import { expandNodes, parseClusterFile } from "../../../src/agent/backends/simulated/cluster-file.js";
import { bindLogOf, readClusterState } from "../../../src/agent/backends/simulated/state-file.js";
import type { NodeInventory } from "../../../src/agent/backends/types.js";
import type { LoadGenerator } from "./load.js";
import { LIMITED_QUEUE, LIMITED_QUEUE_GPUS, type Topology } from "./topology.js";

/** The scheduler's default staleness grace (a gang below its minimum is evicted after it), plus
 * a few cycles of slack. */
const GANG_GRACE_MS = 75_000;
const EPSILON = 1e-6;
/** Pod states in which the books hold a node (the pod may run there). */
const HOLDING = ["BINDING", "RUNNING", "RELEASING"];
/** Two looks at least this far apart: a report on its way in between is not a stray. */
const STRAY_GAP_MS = 3000;

/**
 * A client of the topology's database. Faults cut its connections (PostgreSQL restarted,
 * pg_terminate_backend): a cut connection's error then fails the query under way, or is
 * ignored when none is; unheard, its 'error' event would end the checking process.
 */
export function dbClient(connectionString: string): pg.Client {
  const client = new pg.Client({ connectionString });
  client.on("error", () => {});
  return client;
}

function groupBy<T>(items: Iterable<T>, key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}

export interface ClusterPod {
  cluster: string;
  job: string;
  pod: string;
  queue: string;
  node: string;
  cpuMillis: number;
  memory: number;
  gpus: number;
  gpuFraction: number;
  gpuMemory: number;
  gpuGroups: string[];
  gpuDevices: number[];
  /** When the cluster started the pod (ms): one run of a pod, told apart from a later one. */
  startedAt: number;
}

export interface Violations {
  podsBoundTwice: Set<string>;
  overcommittedNodes: Set<string>;
  /** Of those, the ones over-committed in the control plane's books only. */
  overcommittedInBooks: Set<string>;
  partialGangs: Set<string>;
  limitBreaches: Set<string>;
  ghostPods: Set<string>;
  /** Pods a cluster ran, the same run, in samples `STRAY_GAP_MS` apart, while the books did not
   * hold them on that cluster and node (see strayPods). */
  strayPods: Set<string>;
}

function emptyViolations(): Violations {
  return {
    podsBoundTwice: new Set(),
    overcommittedNodes: new Set(),
    overcommittedInBooks: new Set(),
    partialGangs: new Set(),
    limitBreaches: new Set(),
    ghostPods: new Set(),
    strayPods: new Set(),
  };
}

/** What every cluster runs now, from its state file. */
export function clusterPods(topology: Topology): ClusterPod[] {
  const pods: ClusterPod[] = [];
  for (const [cluster, slot] of topology.agents) {
    for (const { request: r, startedAt } of readClusterState(slot.stateFile).pods) {
      pods.push({
        cluster,
        job: r.job.id,
        pod: r.pod.name,
        queue: r.job.queue,
        node: r.node,
        ...r.pod.resources,
        gpuGroups: r.gpuGroups,
        gpuDevices: r.gpuDevices,
        startedAt,
      });
    }
  }
  return pods;
}

/** How many times each pod ("job/pod") was started, per the clusters' bind logs. */
export function podStarts(topology: Topology): Map<string, number> {
  const starts = new Map<string, number>();
  for (const slot of topology.agents.values()) {
    const log = bindLogOf(slot.stateFile);
    if (!existsSync(log)) continue;
    for (const line of readFileSync(log, "utf8").split("\n")) {
      if (!line) continue;
      const { job, pod } = JSON.parse(line) as { job: string; pod: string };
      const key = `${job}/${pod}`;
      starts.set(key, (starts.get(key) ?? 0) + 1);
    }
  }
  return starts;
}

/** Every bind log line started after `since` (ms): when the first bind after a fault came. */
export function firstBindAfter(topology: Topology, since: number): number | null {
  let first: number | null = null;
  for (const slot of topology.agents.values()) {
    const log = bindLogOf(slot.stateFile);
    if (!existsSync(log)) continue;
    for (const line of readFileSync(log, "utf8").split("\n")) {
      if (!line) continue;
      const { at } = JSON.parse(line) as { at: number };
      if (at > since && (first === null || at < first)) first = at;
    }
  }
  return first;
}

interface DbPod {
  job: string;
  pod: string;
  state: string;
  cluster: string | null;
  node: string | null;
  queue: string;
  /** The job's gang minimum less its pods that already succeeded (they count toward it). */
  min_left: number;
  cpu_millis: number;
  memory: string;
  gpus: number;
  gpu_fraction: number;
  gpu_memory: number;
  gpu_groups: string[];
  gpu_devices: number[];
}

export class Checker {
  private readonly nodes = new Map<string, NodeInventory>();
  private violations = emptyViolations();
  private readonly partialSince = new Map<string, number>();
  /** Runs (cluster/node/job/pod/start) found stray, with when the sample that first found it ended. */
  private readonly straySince = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private sampling: Promise<void> | null = null;
  /** What the samples found, in words (the first few of each window). */
  details: string[] = [];
  /** Samples that could not read the database (it was down): skipped, not failed. */
  skippedSamples = 0;

  constructor(private readonly topology: Topology) {
    for (const c of topology.clusters) {
      for (const n of expandNodes(parseClusterFile(`${c.name}.yaml`, c.yaml)))
        this.nodes.set(`${c.name}/${n.name}`, n);
    }
  }

  /** Samples every `everyMs` until stopped. */
  start(everyMs = 1000): void {
    this.timer = setInterval(() => {
      if (this.sampling) return;
      this.sampling = this.sample().finally(() => {
        this.sampling = null;
      });
    }, everyMs);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.sampling;
  }

  /** What was found since the previous call; starts afresh. */
  take(): Violations {
    const v = this.violations;
    this.violations = emptyViolations();
    this.details = [];
    return v;
  }

  async dbPods(): Promise<DbPod[]> {
    const client = dbClient(this.topology.databaseUrl);
    await client.connect();
    try {
      const r = await client.query<DbPod>(
        `SELECT p.job_id AS job, p.name AS pod, p.state, j.cluster_name AS cluster, p.node_name AS node,
                j.queue_name AS queue,
                j.min_member - (SELECT count(*) FROM pod s WHERE s.job_id = j.id AND s.state = 'SUCCEEDED')::int
                  AS min_left,
                p.cpu_millis, p.memory::text, p.gpus, p.gpu_fraction,
                p.gpu_memory, p.gpu_groups, p.gpu_devices
           FROM pod p JOIN job j ON j.id = p.job_id
          WHERE p.state IN ('BINDING', 'RUNNING', 'RELEASING')`,
      );
      return r.rows;
    } finally {
      await client.end();
    }
  }

  /**
   * One look at the clusters and the database. The clusters are read before and after the
   * database: where a pod runs is compared with the books only for the runs seen in both reads
   * (the same start on the same node), which therefore went on all the time the database was
   * read. A pod evicted and started elsewhere while the query was under way is no double bind.
   */
  async sample(): Promise<void> {
    let db: DbPod[];
    const start = Date.now();
    const before = clusterPods(this.topology);
    try {
      db = await this.dbPods();
    } catch {
      this.skippedSamples++;
      return;
    }
    const running = clusterPods(this.topology);
    const run = (p: ClusterPod) => `${p.cluster}/${p.node}/${p.job}/${p.pod}/${p.startedAt}`;
    const seenBefore = new Set(before.map(run));
    const throughout = running.filter((p) => seenBefore.has(run(p)));
    this.checkOvercommit(
      running.map((p) => ({ ...p, where: `${p.cluster}/${p.node}` })),
      "cluster",
    );
    this.checkOvercommit(
      db
        .filter((p) => p.cluster && p.node)
        .map((p) => ({
          where: `${p.cluster}/${p.node}`,
          job: p.job,
          pod: `${p.pod}(${p.state})`,
          cpuMillis: p.cpu_millis,
          memory: Number(p.memory),
          gpus: p.gpus,
          gpuFraction: p.gpu_fraction,
          gpuMemory: p.gpu_memory,
          gpuGroups: p.gpu_groups,
          gpuDevices: p.gpu_devices,
        })),
      "books",
    );
    this.checkTwice(throughout, db);
    this.checkLimit(running);
    this.checkGangs(running, db);
    this.checkStrays(throughout, db, start);
  }

  /** Resources of the pods on each node against its capacity; GPU groups against one device. */
  private checkOvercommit(
    pods: {
      where: string;
      job: string;
      pod: string;
      cpuMillis: number;
      memory: number;
      gpus: number;
      gpuFraction: number;
      gpuMemory: number;
      gpuGroups: string[];
      gpuDevices: number[];
    }[],
    view: string,
  ): void {
    const byNode = groupBy(pods, (p) => p.where);
    for (const [where, here] of byNode) {
      const node = this.nodes.get(where);
      if (!node) continue;
      const cap = node.capacity;
      const groups = new Map<string, number>();
      const devices = new Map<number, string>();
      let cpu = 0;
      let memory = 0;
      let gpus = 0;
      let deviceClash = false;
      for (const p of here) {
        cpu += p.cpuMillis;
        memory += p.memory;
        gpus += p.gpus;
        const shared = p.gpuFraction > 0 || p.gpuMemory > 0;
        const groupIds = shared ? (p.gpuGroups.length ? p.gpuGroups : [`${p.job}/${p.pod}`]) : [];
        for (const g of groupIds) {
          const used = p.gpuMemory > 0 ? p.gpuMemory : p.gpuFraction * cap.gpuMemory;
          groups.set(g, (groups.get(g) ?? 0) + used / groupIds.length);
        }
        for (const d of p.gpuDevices) {
          if (devices.has(d)) deviceClash = true;
          devices.set(d, `${p.job}/${p.pod}`);
        }
      }
      const over = [
        cpu > cap.cpuMillis && `cpu ${cpu}m of ${cap.cpuMillis}m`,
        memory > cap.memory && `memory ${memory} of ${cap.memory}`,
        gpus + groups.size > cap.gpus && `${gpus} GPU(s) + ${groups.size} shared of ${cap.gpus}`,
        ...[...groups]
          .filter(([, m]) => m > cap.gpuMemory + EPSILON)
          .map(([g, m]) => `GPU group ${g}: ${m} MiB of ${cap.gpuMemory}`),
        deviceClash && "a GPU device held twice",
        here.length > node.maxPods && `${here.length} pods of ${node.maxPods}`,
      ].filter(Boolean);
      if (over.length) {
        const key = `${view}:${where}`;
        if (!this.violations.overcommittedNodes.has(key))
          this.details.push(`${key}: ${over.join(", ")} (${here.map((p) => `${p.job}/${p.pod}`).join(" ")})`);
        this.violations.overcommittedNodes.add(key);
        if (view === "books") this.violations.overcommittedInBooks.add(key);
      }
    }
  }

  /** A pod on two nodes (or clusters) at once, or on another node than the books say. */
  private checkTwice(running: ClusterPod[], db: DbPod[]): void {
    const seen = new Map<string, string>();
    for (const p of running) {
      const key = `${p.job}/${p.pod}`;
      const where = `${p.cluster}/${p.node}`;
      const before = seen.get(key);
      if (before && before !== where) this.twice(key, `runs on ${before} and on ${where}`);
      seen.set(key, where);
    }
    for (const p of db) {
      const key = `${p.job}/${p.pod}`;
      const where = seen.get(key);
      if (where && p.state === "RUNNING" && where !== `${p.cluster}/${p.node}`)
        this.twice(key, `runs on ${where}, RUNNING on ${p.cluster}/${p.node} in the books`);
    }
  }

  private twice(key: string, why: string): void {
    if (!this.violations.podsBoundTwice.has(key)) this.details.push(`pod ${key} ${why}`);
    this.violations.podsBoundTwice.add(key);
  }

  /**
   * Runs the books do not hold where they go on (not BINDING, RUNNING or RELEASING on that cluster
   * and node), found again by a sample that began `STRAY_GAP_MS` or more after the one that first
   * found them ended: the same look as strayPods, all along.
   */
  private checkStrays(running: ClusterPod[], db: DbPod[], sampleStart: number): void {
    const held = new Set(db.map((p) => `${p.cluster}/${p.node}/${p.job}/${p.pod}`));
    const stray = new Set<string>();
    for (const p of running) {
      if (held.has(`${p.cluster}/${p.node}/${p.job}/${p.pod}`)) continue;
      const run = `${p.cluster}/${p.node}/${p.job}/${p.pod}/${p.startedAt}`;
      stray.add(run);
      const since = this.straySince.get(run);
      if (since === undefined) continue;
      if (sampleStart - since < STRAY_GAP_MS) continue;
      const key = `${p.job}/${p.pod}`;
      if (!this.violations.strayPods.has(key)) {
        const books = db.find((b) => b.job === p.job && b.pod === p.pod);
        this.details.push(
          `pod ${key} runs on ${p.cluster}/${p.node}, ${books ? `${books.state} on ${books.cluster}/${books.node}` : "not held on any node"} in the books`,
        );
      }
      this.violations.strayPods.add(key);
    }
    const now = Date.now();
    for (const run of stray) if (!this.straySince.has(run)) this.straySince.set(run, now);
    for (const run of this.straySince.keys()) if (!stray.has(run)) this.straySince.delete(run);
  }

  /** The limited queue's GPUs per cluster against its limit (a default row: every cluster). */
  private checkLimit(running: ClusterPod[]): void {
    const gpus = new Map<string, number>();
    for (const p of running)
      if (p.queue === LIMITED_QUEUE) gpus.set(p.cluster, (gpus.get(p.cluster) ?? 0) + p.gpus);
    for (const [cluster, n] of gpus)
      if (n > LIMITED_QUEUE_GPUS) this.violations.limitBreaches.add(`${LIMITED_QUEUE}@${cluster}`);
  }

  /** Gangs with some but fewer than their minimum pods running (those that succeeded count),
   * for longer than the grace. */
  private checkGangs(running: ClusterPod[], db: DbPod[]): void {
    const minMember = new Map(db.map((p) => [p.job, p.min_left]));
    const runningPods = new Map<string, number>();
    for (const p of running) runningPods.set(p.job, (runningPods.get(p.job) ?? 0) + 1);
    const now = Date.now();
    for (const [job, n] of runningPods) {
      const min = minMember.get(job);
      if (min === undefined || n >= min) {
        this.partialSince.delete(job);
        continue;
      }
      const since = this.partialSince.get(job) ?? now;
      this.partialSince.set(job, since);
      if (now - since > GANG_GRACE_MS) this.violations.partialGangs.add(job);
    }
    for (const job of this.partialSince.keys()) if (!runningPods.has(job)) this.partialSince.delete(job);
  }

  /**
   * Pods the database holds as RUNNING that their cluster does not run, in two looks `gapMs`
   * apart (a report on its way is not a ghost). Their keys.
   */
  async ghostPods(gapMs = 3000): Promise<Set<string>> {
    const look = async () => {
      const db = await this.dbPods();
      const running = new Set(clusterPods(this.topology).map((p) => `${p.cluster}/${p.job}/${p.pod}`));
      return new Set(
        db
          .filter((p) => p.state === "RUNNING" && !running.has(`${p.cluster}/${p.job}/${p.pod}`))
          .map((p) => `${p.job}/${p.pod}`),
      );
    };
    const first = await look();
    if (first.size === 0) return first;
    await new Promise((r) => setTimeout(r, gapMs));
    const second = await look();
    return new Set([...first].filter((k) => second.has(k)));
  }

  /**
   * Pods a cluster runs that the books do not hold there: not BINDING (bound, the result on its
   * way), RUNNING or RELEASING (an eviction on its way) on that cluster and node — PENDING,
   * PIPELINED, finished, on another node or cluster, or no such pod. Such a pod takes resources
   * the books give to others. In two looks `gapMs` apart, the same run (start) in both (a report
   * on its way is not a stray); in each look the clusters are read before and after the books,
   * and only runs seen in both reads count (a run that ended while the books were read, its end
   * already booked, is none). Their keys ("job/pod"), each with what the books say of it.
   */
  async strayPods(gapMs = STRAY_GAP_MS): Promise<Map<string, string>> {
    const run = (p: ClusterPod) => `${p.cluster}/${p.node}/${p.job}/${p.pod}/${p.startedAt}`;
    const look = async () => {
      const before = clusterPods(this.topology);
      const held = await this.bookedPods(before);
      const seenBefore = new Set(before.map(run));
      const throughout = clusterPods(this.topology).filter((p) => seenBefore.has(run(p)));
      const strays = new Map<string, string>();
      for (const p of throughout) {
        const b = held.get(`${p.job}/${p.pod}`);
        const where = `${p.cluster}/${p.node}`;
        if (b && HOLDING.includes(b.state) && `${b.cluster}/${b.node}` === where) continue;
        const books = b ? `${b.state} on ${b.cluster ?? "—"}/${b.node ?? "—"}` : "no such pod";
        strays.set(run(p), `pod ${p.job}/${p.pod} runs on ${where}, ${books} in the books`);
      }
      return strays;
    };
    const first = await look();
    if (first.size === 0) return new Map();
    await new Promise((r) => setTimeout(r, gapMs));
    const second = await look();
    const strays = new Map<string, string>();
    for (const [r, why] of second) {
      if (!first.has(r)) continue;
      const [, , job, pod] = r.split("/");
      strays.set(`${job}/${pod}`, why);
    }
    return strays;
  }

  /** The books' state and place of these pods (any state), by "job/pod". */
  private async bookedPods(
    pods: ClusterPod[],
  ): Promise<Map<string, { state: string; cluster: string | null; node: string | null }>> {
    const client = dbClient(this.topology.databaseUrl);
    await client.connect();
    try {
      const r = await client.query<{
        job: string;
        pod: string;
        state: string;
        cluster: string | null;
        node: string | null;
      }>(
        `SELECT p.job_id::text AS job, p.name AS pod, p.state::text AS state, j.cluster_name AS cluster,
                p.node_name AS node
           FROM jsonb_to_recordset($1::jsonb) AS v(job uuid, pod text)
           JOIN pod p ON p.job_id = v.job AND p.name = v.pod
           JOIN job j ON j.id = p.job_id`,
        [JSON.stringify(pods.map((p) => ({ job: p.job, pod: p.pod })))],
      );
      return new Map(r.rows.map((row) => [`${row.job}/${row.pod}`, row]));
    } finally {
      await client.end();
    }
  }

  /** Pods started more often than the control plane sent BIND requests for them. */
  async podsStartedTooOften(): Promise<Set<string>> {
    const client = dbClient(this.topology.databaseUrl);
    await client.connect();
    let asked: Map<string, number>;
    try {
      const r = await client.query<{ key: string; n: number }>(
        `SELECT b.job_id || '/' || p.name AS key, count(*)::int AS n
           FROM bind_request b JOIN pod p ON p.id = b.pod_id WHERE b.kind = 'BIND' GROUP BY 1`,
      );
      asked = new Map(r.rows.map((row) => [row.key, row.n]));
    } finally {
      await client.end();
    }
    const twice = new Set<string>();
    for (const [key, n] of podStarts(this.topology)) {
      if (n <= (asked.get(key) ?? 0)) continue;
      twice.add(key);
      if (twice.size <= 3)
        this.details.push(`pod ${key} started ${n} times, ${asked.get(key) ?? 0} BIND request(s)`);
    }
    return twice;
  }
}

export interface JobAccount {
  /** Accepted submissions with no job, or with more than one. */
  lost: string[];
  duplicated: string[];
  /** Accepted jobs still waiting (not running, not finished). */
  stuck: string[];
}

/** Accepted submissions against the jobs in the database. */
export async function accountJobs(topology: Topology, load: LoadGenerator): Promise<JobAccount> {
  const client = dbClient(topology.databaseUrl);
  await client.connect();
  try {
    const rows = (
      await client.query<{ id: string; key: string | null; state: string }>(
        "SELECT id::text, idempotency_key AS key, state::text FROM job",
      )
    ).rows;
    const byKey = groupBy(
      rows.filter((r) => r.key),
      (r) => r.key!,
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    const lost: string[] = [];
    const duplicated: string[] = [];
    const stuck: string[] = [];
    for (const [key, id] of load.accepted) {
      const job = byId.get(id);
      if (!job) lost.push(key);
      else if (job.state === "PENDING" || job.state === "ADMITTED") stuck.push(key);
      if ((byKey.get(key)?.length ?? 0) > 1) duplicated.push(key);
    }
    return { lost, duplicated, stuck };
  } finally {
    await client.end();
  }
}

/** Jobs not yet running or finished: the backlog. */
export async function backlog(topology: Topology): Promise<number> {
  const client = dbClient(topology.databaseUrl);
  await client.connect();
  try {
    const r = await client.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM job WHERE state IN ('PENDING', 'ADMITTED')",
    );
    return r.rows[0]!.n;
  } finally {
    await client.end();
  }
}

/**
 * Why each of these jobs (ids) is not progressing, one block of lines per job: its row, its pods,
 * its BindRequests, its latest events, its cluster and its queue's quotas from the database, and
 * what the clusters run of it.
 */
export async function describeJobs(topology: Topology, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const client = dbClient(topology.databaseUrl);
  await client.connect();
  const ts = (d: Date | null) => (d ? d.toISOString().slice(11, 23) : "—");
  try {
    const jobs = (
      await client.query(
        `SELECT id::text, name, queue_name, requested_cluster, cluster_name, state::text, min_member,
                pending_reason, created_at, admitted_at, started_at, stale_since, last_start_at
           FROM job WHERE id = ANY($1::uuid[]) ORDER BY created_at`,
        [ids],
      )
    ).rows;
    const pods = groupBy(
      (
        await client.query(
          `SELECT job_id::text AS job, name, state::text, node_name, gpus, gpu_fraction, gpu_memory,
                  message, updated_at
             FROM pod WHERE job_id = ANY($1::uuid[]) ORDER BY name`,
          [ids],
        )
      ).rows,
      (r) => r.job as string,
    );
    const binds = groupBy(
      (
        await client.query(
          `SELECT b.job_id::text AS job, p.name AS pod, b.kind::text, b.state::text, b.node_name,
                  b.attempts, b.last_error, b.generation::text, b.created_at, b.dispatched_at, b.completed_at
             FROM bind_request b JOIN pod p ON p.id = b.pod_id
            WHERE b.job_id = ANY($1::uuid[]) ORDER BY b.created_at`,
          [ids],
        )
      ).rows,
      (r) => r.job as string,
    );
    const events = groupBy(
      (
        await client.query(
          `SELECT job_id::text AS job, at, kind, message FROM (
             SELECT e.*, row_number() OVER (PARTITION BY job_id ORDER BY id DESC) AS n
               FROM event e WHERE job_id = ANY($1::uuid[])) x
            WHERE n <= 8 ORDER BY id`,
          [ids],
        )
      ).rows,
      (r) => r.job as string,
    );
    const clusters = (
      await client.query("SELECT name, state::text, heartbeat_at, generation::text, cordoned FROM cluster")
    ).rows;
    const quotas = (
      await client.query(
        'SELECT queue_name, scope, resource::text, deserved, "limit", over_quota_weight FROM queue_quota ORDER BY 1, 2, 3',
      )
    ).rows;
    const running = groupBy(clusterPods(topology), (p) => p.job);
    const lines = [
      `clusters: ${clusters.map((c) => `${c.name} ${c.state}${c.cordoned ? " cordoned" : ""} (heartbeat ${ts(c.heartbeat_at)}, generation ${c.generation})`).join("; ")}`,
      `quotas: ${quotas.map((q) => `${q.queue_name}@${q.scope} ${q.resource} deserved ${q.deserved ?? "—"} limit ${q.limit ?? "—"} weight ${q.over_quota_weight ?? "—"}`).join("; ")}`,
    ];
    for (const j of jobs) {
      lines.push(
        `job ${j.id} (${j.name}) ${j.state} queue ${j.queue_name}, cluster ${j.cluster_name ?? "—"}${j.requested_cluster ? ` (asked ${j.requested_cluster})` : ""}, min ${j.min_member}; created ${ts(j.created_at)}, admitted ${ts(j.admitted_at)}, started ${ts(j.started_at)}, last start ${ts(j.last_start_at)}, stale since ${ts(j.stale_since)}; pending reason ${JSON.stringify(j.pending_reason)}`,
      );
      for (const p of pods.get(j.id) ?? [])
        lines.push(
          `  pod ${p.name} ${p.state} on ${p.node_name ?? "—"} (gpus ${p.gpus}, fraction ${p.gpu_fraction}, memory ${p.gpu_memory}) updated ${ts(p.updated_at)}${p.message ? `: ${p.message}` : ""}`,
        );
      for (const b of binds.get(j.id) ?? [])
        lines.push(
          `  ${b.kind} ${b.pod} → ${b.node_name} ${b.state} (attempts ${b.attempts}, generation ${b.generation}) created ${ts(b.created_at)}, dispatched ${ts(b.dispatched_at)}, completed ${ts(b.completed_at)}${b.last_error ? `: ${b.last_error}` : ""}`,
        );
      for (const p of running.get(j.id) ?? [])
        lines.push(`  runs in ${p.cluster}: ${p.pod} on ${p.node} since ${ts(new Date(p.startedAt))}`);
      for (const e of events.get(j.id) ?? []) lines.push(`  event ${ts(e.at)} ${e.kind}: ${e.message}`);
    }
    return lines;
  } finally {
    await client.end();
  }
}
