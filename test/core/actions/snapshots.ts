// Hand-made snapshots and an explicit configuration for the disruptive actions' unit
// tests: plain core data (no scenario reader), so each test states exactly what it runs.
import {
  type ActionName,
  type NodeSpec,
  type PodGroupSpec,
  type PodSpec,
  type QueueSpec,
  type SchedulerConfig,
  type SessionResult,
  type Snapshot,
  defaultSchedulerConfig,
  runSession,
} from "../../../src/core/index.js";

export const NOW = Date.UTC(2025, 0, 1);
const MINUTE = 60_000;
const GB = 1e9;

/** KAI's default actions' configuration with `actions`; stale gangs go at once, as in KAI's test harness. */
export function config(
  actions: ActionName[],
  session: Partial<SchedulerConfig["session"]> = {},
): SchedulerConfig {
  const defaults = defaultSchedulerConfig();
  return {
    ...defaults,
    actions,
    session: {
      ...defaults.session,
      stalenessGracePeriodSeconds: 0,
      maxScenariosPerJob: 2000,
      maxScenariosPerAction: 20000,
      ...session,
    },
  };
}

export function gpuNode(name: string, gpus: number): NodeSpec {
  return {
    name,
    labels: {},
    taints: [],
    unschedulable: false,
    ready: true,
    allocatable: { cpuMillis: 64_000, memory: 512 * GB, gpus, pods: 110, extended: {} },
    gpuMemory: 16_000,
    gpuMemorySynced: true,
    gpuModel: null,
    migStrategy: null,
  };
}

/** A leaf (or department) queue; GPU quota in devices, -1 unlimited. */
export function queue(
  name: string,
  order: number,
  o: { parent?: string; deserved?: number; limit?: number; weight?: number; priority?: number } = {},
): QueueSpec {
  return {
    name,
    parent: o.parent ?? null,
    priority: o.priority ?? 100,
    createdAt: NOW + order * MINUTE,
    deserved: { gpu: o.deserved ?? 0, cpuMillis: -1, memory: -1 },
    limit: { gpu: o.limit ?? -1, cpuMillis: -1, memory: -1 },
    overQuotaWeight: { gpu: o.weight ?? 0, cpuMillis: 1, memory: 1 },
  };
}

export interface PodInput {
  state?: PodSpec["status"];
  node?: string;
  gpus?: number;
}

/** A job of `pods`, each asking `gpus` whole GPUs unless it says otherwise. */
export function job(
  name: string,
  queueName: string,
  pods: PodInput[],
  o: {
    priority?: number;
    preemptible?: boolean;
    minMember?: number;
    ageMinutes?: number;
    gpus?: number;
  } = {},
): PodGroupSpec {
  const priority = o.priority ?? 50;
  const specs: PodSpec[] = pods.map((p, i) => ({
    uid: `${name}-${i}`,
    name: `${name}-${i}`,
    namespace: "ns",
    status: p.state ?? "Pending",
    node: p.node ?? null,
    request: {
      cpuMillis: 1000,
      memory: GB,
      gpus: p.gpus ?? o.gpus ?? 1,
      gpuFraction: 0,
      gpuMemory: 0,
      mig: {},
      extended: {},
    },
    gpuGroups: [],
    labels: {},
    subGroup: null,
    priority: null,
    createdAt: null,
  }));
  const placed = specs.some((p) => ["Running", "Bound", "Binding", "Allocated"].includes(p.status));
  return {
    uid: name,
    name,
    namespace: "ns",
    queue: queueName,
    priority,
    preemptible: o.preemptible ?? priority < 100,
    minMember: o.minMember ?? pods.length,
    createdAt: NOW - (o.ageMinutes ?? 1) * MINUTE,
    lastStartAt: placed ? NOW - MINUTE : null,
    staleSince: null,
    subGroups: [],
    topology: null,
    pods: specs,
  };
}

export const running = (node: string, gpus?: number): PodInput => ({ state: "Running", node, gpus });
export const pending = (gpus?: number): PodInput => ({ gpus });

export function snapshot(nodes: NodeSpec[], queues: QueueSpec[], jobs: PodGroupSpec[]): Snapshot {
  return { now: NOW, nodes, queues, jobs, topologies: [] };
}

/** Queue a is over its share on one node; b's jobs (b0 and `extra`) can only get GPUs by reclaim. */
export function contended(extra: PodGroupSpec[] = []): Snapshot {
  return snapshot(
    [gpuNode("n1", 4)],
    [queue("a", 0, { deserved: 2 }), queue("b", 1, { deserved: 2 })],
    [
      job("a0", "a", [running("n1")], { ageMinutes: 40 }),
      job("a1", "a", [running("n1")], { ageMinutes: 30 }),
      job("a2", "a", [running("n1")], { ageMinutes: 20 }),
      job("a3", "a", [running("n1")], { ageMinutes: 10 }),
      job("b0", "b", [pending(), pending()], { ageMinutes: 5 }),
      ...extra,
    ],
  );
}

/** The session's committed decisions, as sorted lists of "pod" and "pod@node". */
export function decisions(r: SessionResult): { binds: string[]; pipelines: string[]; evictions: string[] } {
  return {
    binds: r.binds.map((b) => `${b.pod}@${b.node}`).sort(),
    pipelines: r.pipelines.map((p) => `${p.pod}@${p.node}`).sort(),
    evictions: r.evictions.map((e) => e.pod).sort(),
  };
}

export function run(s: Snapshot, actions: ActionName[], session: Partial<SchedulerConfig["session"]> = {}) {
  const r = runSession(s, config(actions, session));
  return { result: r, ...decisions(r) };
}
