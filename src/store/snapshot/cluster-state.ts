// One cluster's snapshot rows held in memory and the specs built from them. A full read
// replaces everything; a delta replaces only the nodes and jobs read again, and the specs of
// every other node and job are reused as they are. The full loader and the workers' caches
// both build their snapshots here, so the same rows give the same snapshot.
import type { NodeSpec, PodGroupSpec, QueueSpec, QuotaVector, Snapshot } from "../../core/api/spec.js";
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
  pods: PodRecord[];
  spec: PodGroupSpec;
}

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
  private readonly jobRows = new Map<string, JobRow>();
  /** Snapshot order of the jobs; null after a job came or went (sorted again on demand). */
  private order: JobEntry[] | null = [];
  private jobSpecs: PodGroupSpec[] | null = null;
  private readonly registry = new TopologyRegistry();

  constructor(readonly cluster: string) {}

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

  /** Nodes already held, read again. */
  updateNodes(nodes: readonly NodeRecord[]): void {
    for (const n of nodes) {
      const i = this.nodeIndex.get(n.name)!;
      this.nodes[i] = n;
      this.nodeSpecs[i] = nodeSpec(n, this.cordoned);
    }
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

  setQueues(queues: readonly QueueRecord[], quotas: readonly QuotaRecord[]): void {
    const byQueue = groupBy(quotas, (q) => q.queueName);
    this.queueSpecs = queues.map((q) =>
      queueSpec(q, effectiveQuota(byQueue.get(q.name) ?? [], this.cluster)),
    );
  }

  /** All the cluster's snapshot jobs (rows in snapshot order). */
  setJobs(rows: JobRows): void {
    this.entries.clear();
    this.podRows.clear();
    this.jobRows.clear();
    this.upsert(rows);
    this.order = [...this.entries.values()];
  }

  /** Jobs read again (`ids`): those `rows` does not hold have left the snapshot. */
  updateJobs(ids: readonly string[], rows: JobRows): void {
    const found = new Set(rows.jobs.map((j) => j.id));
    for (const id of ids) {
      const e = this.entries.get(id);
      if (!e || found.has(id)) continue;
      this.drop(e);
      this.entries.delete(id);
      this.order = null;
    }
    if (this.upsert(rows)) this.order = null;
    this.jobSpecs = null;
  }

  private drop(e: JobEntry): void {
    this.jobRows.delete(e.job.id);
    for (const p of e.pods) this.podRows.delete(p.id);
  }

  /** Returns whether a job came into the snapshot (its order must be sorted again). */
  private upsert(rows: JobRows): boolean {
    const tasksByJob = groupBy<TaskRecord, string>(rows.tasks, (t) => t.jobId);
    const podsByJob = groupBy<PodRecord, string>(rows.pods, (p) => p.jobId);
    let added = false;
    for (const job of rows.jobs) {
      const pods = podsByJob.get(job.id) ?? [];
      const tasks = new Map((tasksByJob.get(job.id) ?? []).map((t) => [t.name, t]));
      const spec = jobSpec(job, tasks, pods, this.registry);
      const held = this.entries.get(job.id);
      if (held) {
        // Same job, same place in the order (its creation time and id never change).
        this.drop(held);
        held.job = job;
        held.pods = pods;
        held.spec = spec;
      } else {
        this.entries.set(job.id, { job, pods, spec });
        added = true;
      }
      this.jobRows.set(job.id, jobRowOf(job));
      for (const p of pods) this.podRows.set(p.id, p);
    }
    this.jobSpecs = null;
    return added;
  }

  counts(): ClusterCounts {
    return { nodes: this.nodes.length, jobs: this.entries.size, pods: this.podRows.size };
  }

  /** The snapshot at `now`. Its arrays are the caller's; the specs in them are shared with
   * later snapshots and must not be changed. */
  snapshot(now: number, usage: ReadonlyMap<string, QuotaVector> | null): LoadedSnapshot {
    if (!this.order) this.order = [...this.entries.values()].sort(jobOrder);
    this.jobSpecs ??= this.order.filter((e) => e.spec.pods.length > 0).map((e) => e.spec);
    return {
      generation: this.generation,
      snapshot: {
        now,
        nodes: this.nodeSpecs.slice(),
        queues: this.queueSpecs.map((q) => (usage ? { ...q, usage: usage.get(q.name) ?? null } : q)),
        jobs: this.jobSpecs.slice(),
        topologies: this.registry.topologies(this.jobSpecs),
      },
      rows: { pods: this.podRows, jobs: this.jobRows },
    };
  }
}
