// One cluster's snapshot rows held in memory and the specs built from them. A full read
// replaces everything; a delta replaces only the nodes and jobs read again, and the specs of
// every other node and job are reused as they are. The full loader and the workers' caches
// both build their snapshots here, so the same rows give the same snapshot.
import type {
  NodeSpec,
  PodGroupSpec,
  QueueSpec,
  QuotaVector,
  Snapshot,
  TopologySpec,
} from "../../core/index.js";
import { groupBy } from "../collections.js";
import { effectiveQuota } from "../domain/quotas.js";
import { jobSpec, nodeSpec, queueSpec, TopologyRegistry } from "./map-rows.js";
import type { ClusterCounts, ClusterRecord, JobRows } from "./read-rows.js";
import type { JobRow, PodRow, SnapshotRows } from "./rows.js";
import {
  jobRowOf,
  type JobRecord,
  type NodeRecord,
  type PodRecord,
  type QueueRecord,
  type QuotaRecord,
  type TaskRecord,
} from "./records.js";

export interface LoadedSnapshot {
  snapshot: Snapshot;
  /** The cluster's generation the snapshot was read at: pass it to commitSession. */
  generation: number;
  /** The rows the snapshot was built from (every job in it and all its pods): pass them to
   * commitSession, which plans from them. Valid until the cluster's next refresh. */
  rows: SnapshotRows;
}

interface JobEntry {
  job: JobRecord;
  tasks: TaskRecord[];
  pods: PodRecord[];
  spec: PodGroupSpec;
}

/** Rows read again are often the same rows (a delta re-reads what a transaction still open at
 * the last read may have written): they change nothing. */
const sameRows = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

const jobOrder = (a: JobEntry, b: JobEntry) =>
  a.job.createdAt - b.job.createdAt || (a.job.id < b.job.id ? -1 : a.job.id > b.job.id ? 1 : 0);

export class ClusterState {
  generation = 0;
  private cordoned = false;
  private nodes: NodeRecord[] = [];
  private nodeSpecs: NodeSpec[] = [];
  private readonly nodeIndex = new Map<string, number>();
  private queueSpecs: QueueSpec[] = [];
  private readonly entries = new Map<string, JobEntry>();
  private readonly podRows = new Map<string, PodRow>();
  private readonly pipelinedPods = new Set<string>();
  private readonly jobRows = new Map<string, JobRow>();
  /** Snapshot order of the jobs; null after a job came or went (sorted again on demand: new jobs
   * come last in the map, so the sort meets an almost sorted list and is close to linear). */
  private order: JobEntry[] | null = [];
  private jobSpecs: PodGroupSpec[] | null = null;
  /** The topologies `jobSpecs` use, found with them (not by reading every job per snapshot). */
  private topologySpecs: TopologySpec[] = [];
  private readonly registry = new TopologyRegistry();

  constructor(readonly cluster: string) {}

  /** Whether the generation and the cordon are those held. */
  sameCluster(c: ClusterRecord): boolean {
    return c.generation === this.generation && c.cordoned === this.cordoned;
  }

  /** Returns whether the generation or the cordon changed. */
  setCluster(c: ClusterRecord): boolean {
    const changed = c.generation !== this.generation || c.cordoned !== this.cordoned;
    this.generation = c.generation;
    if (c.cordoned !== this.cordoned) {
      this.cordoned = c.cordoned;
      this.nodeSpecs = this.nodes.map((n) => nodeSpec(n, this.cordoned));
    }
    return changed;
  }

  hasNode(name: string): boolean {
    return this.nodeIndex.has(name);
  }

  /** Every node of the cluster, in snapshot order. */
  setNodes(nodes: NodeRecord[]): void {
    this.nodes = nodes;
    this.nodeSpecs = nodes.map((n) => nodeSpec(n, this.cordoned));
    this.nodeIndex.clear();
    for (const [i, n] of nodes.entries()) this.nodeIndex.set(n.name, i);
  }

  /** Nodes already held, read again. Returns whether any differs from the one held. */
  updateNodes(nodes: readonly NodeRecord[]): boolean {
    let changed = false;
    for (const n of nodes) {
      const i = this.nodeIndex.get(n.name)!;
      if (sameRows(this.nodes[i], n)) continue;
      changed = true;
      this.nodes[i] = n;
      this.nodeSpecs[i] = nodeSpec(n, this.cordoned);
    }
    return changed;
  }

  readyCapacity(): { gpu: number; cpuMillis: number; memory: number } {
    const c = { gpu: 0, cpuMillis: 0, memory: 0 };
    for (const n of this.nodes) {
      if (!n.ready) continue;
      c.gpu += n.gpus;
      c.cpuMillis += n.cpuMillis;
      c.memory += n.memory;
    }
    return c;
  }

  /** Returns whether the queue specs differ from those held. */
  setQueues(queues: readonly QueueRecord[], quotas: readonly QuotaRecord[]): boolean {
    const byQueue = groupBy(quotas, (q) => q.queueName);
    const specs = queues.map((q) => queueSpec(q, effectiveQuota(byQueue.get(q.name) ?? [], this.cluster)));
    if (sameRows(specs, this.queueSpecs)) return false;
    this.queueSpecs = specs;
    return true;
  }

  /** All the cluster's snapshot jobs (rows in snapshot order). */
  setJobs(rows: JobRows): void {
    this.entries.clear();
    this.podRows.clear();
    this.pipelinedPods.clear();
    this.jobRows.clear();
    this.upsert(rows);
    this.order = [...this.entries.values()];
    this.jobSpecs = null;
  }

  /** Jobs read again (`ids`): those `rows` does not hold have left the snapshot. Returns
   * whether anything differs from what was held. */
  updateJobs(ids: readonly string[], rows: JobRows): boolean {
    const found = new Set(rows.jobs.map((j) => j.id));
    let changed = false;
    for (const id of ids) {
      const e = this.entries.get(id);
      if (!e || found.has(id)) continue;
      this.drop(e);
      this.entries.delete(id);
      this.order = null;
      changed = true;
    }
    const upserted = this.upsert(rows);
    if (upserted.added) this.order = null;
    if (upserted.changed) this.jobSpecs = null;
    if (changed) this.jobSpecs = null;
    return changed || upserted.changed;
  }

  private drop(e: JobEntry): void {
    this.jobRows.delete(e.job.id);
    for (const p of e.pods) {
      this.podRows.delete(p.id);
      this.pipelinedPods.delete(p.id);
    }
  }

  /** `added`: a job came into the snapshot (the order must be sorted again); `changed`: some
   * job's rows differ from those held. */
  private upsert(rows: JobRows): { added: boolean; changed: boolean } {
    const tasksByJob = groupBy<TaskRecord, string>(rows.tasks, (t) => t.jobId);
    const podsByJob = groupBy<PodRecord, string>(rows.pods, (p) => p.jobId);
    let added = false;
    let changed = false;
    for (const job of rows.jobs) {
      const pods = (podsByJob.get(job.id) ?? []).sort(byId);
      const tasks = (tasksByJob.get(job.id) ?? []).sort(byName);
      const held = this.entries.get(job.id);
      if (held && sameRows([held.job, held.tasks, held.pods], [job, tasks, pods])) continue;
      changed = true;
      const spec = jobSpec(job, new Map(tasks.map((t) => [t.name, t])), pods, this.registry);
      if (held) {
        // Same job, same place in the order (its creation time and id never change).
        this.drop(held);
        held.job = job;
        held.tasks = tasks;
        held.pods = pods;
        held.spec = spec;
      } else {
        this.entries.set(job.id, { job, tasks, pods, spec });
        added = true;
      }
      this.jobRows.set(job.id, jobRowOf(job));
      for (const p of pods) {
        this.podRows.set(p.id, p);
        if (p.state === "PIPELINED") this.pipelinedPods.add(p.id);
      }
    }
    return { added, changed };
  }

  counts(): ClusterCounts {
    return { nodes: this.nodes.length, jobs: this.entries.size, pods: this.podRows.size };
  }

  /** The snapshot at `now`. Its arrays are the caller's; the specs in them are shared with
   * later snapshots and must not be changed. */
  snapshot(now: number, usage: ReadonlyMap<string, QuotaVector> | null): LoadedSnapshot {
    if (!this.order) this.order = [...this.entries.values()].sort(jobOrder);
    if (!this.jobSpecs) {
      const specs: PodGroupSpec[] = [];
      for (const e of this.order) if (e.spec.pods.length > 0) specs.push(e.spec);
      this.jobSpecs = specs;
      this.topologySpecs = this.registry.topologies(this.jobSpecs);
    }
    return {
      generation: this.generation,
      snapshot: {
        now,
        nodes: this.nodeSpecs.slice(),
        queues: this.queueSpecs.map((q) => (usage ? { ...q, usage: usage.get(q.name) ?? null } : q)),
        jobs: this.jobSpecs.slice(),
        topologies: this.topologySpecs.slice(),
      },
      rows: { pods: this.podRows, jobs: this.jobRows, pipelined: this.pipelinedPods },
    };
  }
}
