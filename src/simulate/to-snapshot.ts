// A scenario → the core's snapshot and configuration (the conventions of
// scenario-format.md: list order is creation order, ages in minutes, -1 unlimited).
import {
  type NodeSpec,
  type PodGroupSpec,
  type PodSpec,
  type QueueSpec,
  type QuotaVector,
  type SchedulerConfig,
  type Snapshot,
  type TopologyConstraintSpec,
  defaultSchedulerConfig,
  loadSchedulerConfig,
  parseDurationSeconds,
} from "../core/index.js";
import type { Scenario, ScenarioJob } from "./scenario.js";

/** The simulated clock: a fixed instant, so outcomes never depend on when they run. */
export const SIMULATION_NOW = Date.UTC(2025, 0, 1);
const MINUTE = 60_000;

// Shared by every task that has none (the core never changes a snapshot; frozen, so a change
// would fail loudly): tens of thousands of tasks then make no empty objects of their own.
const NO_COUNTS: Record<string, number> = Object.freeze({});
const NO_LABELS: Record<string, string> = Object.freeze({});
const NO_NAMES: string[] = Object.freeze([]) as unknown as string[];
const NO_SUB_GROUPS: PodGroupSpec["subGroups"] = Object.freeze([]) as unknown as PodGroupSpec["subGroups"];

function quota(
  q: { gpu?: number | null; cpuMillis?: number | null; memory?: number | null } | null | undefined,
  dflt: QuotaVector,
): QuotaVector {
  return {
    gpu: q?.gpu ?? dflt.gpu,
    cpuMillis: q?.cpuMillis ?? dflt.cpuMillis,
    memory: q?.memory ?? dflt.memory,
  };
}

function nodes(s: Scenario): NodeSpec[] {
  return Object.entries(s.nodes).map(([name, n]) => ({
    name,
    labels: { ...(n.labels ?? {}) },
    taints: n.taints ?? [],
    unschedulable: n.unschedulable ?? false,
    ready: n.ready ?? true,
    allocatable: {
      cpuMillis: n.cpuMillis ?? 8000,
      memory: n.memory ?? 8e9,
      gpus: n.migStrategy === "mixed" ? 0 : (n.gpus ?? 0),
      pods: n.maxPods ?? 110,
      extended: { ...(n.migInstances ?? {}) },
    },
    gpuMemory: n.gpuMemory ?? 100,
    gpuMemorySynced: n.gpuMemorySynced ?? true,
    gpuModel: n.gpuModel ?? null,
    migStrategy: n.migStrategy ?? null,
    gpuDevices: n.gpuDevices?.map((d, index) => ({
      index,
      nvlinkDomain: d.nvlinkDomain ?? undefined,
      numaNode: d.numaNode ?? undefined,
    })),
  }));
}

function queues(s: Scenario, now: number): QueueSpec[] {
  return s.queues.map((q, i) => ({
    name: q.name,
    parent: q.parent ?? null,
    priority: q.priority ?? 100,
    createdAt: now + i * MINUTE,
    deserved: quota(q.deserved, { gpu: 0, cpuMillis: -1, memory: -1 }),
    limit: quota(q.limit, { gpu: -1, cpuMillis: -1, memory: -1 }),
    overQuotaWeight: quota(q.overQuotaWeight, { gpu: 1, cpuMillis: 1, memory: 1 }),
    preemptMinRuntimeSeconds:
      q.preemptMinRuntime == null
        ? null
        : parseDurationSeconds(q.preemptMinRuntime, `queues[${i}].preemptMinRuntime`),
    reclaimMinRuntimeSeconds:
      q.reclaimMinRuntime == null
        ? null
        : parseDurationSeconds(q.reclaimMinRuntime, `queues[${i}].reclaimMinRuntime`),
  }));
}

function constraint(t: ScenarioJob["topology"]): TopologyConstraintSpec | null {
  if (!t) return null;
  return { topology: t.topologyName ?? null, required: t.required ?? null, preferred: t.preferred ?? null };
}

function job(j: ScenarioJob, index: number, count: number, now: number): PodGroupSpec {
  const priority = j.priority ?? 50;
  const ns = j.namespace ?? "default";
  // Equal ages: the earlier in the list is the older (a millisecond apart).
  const createdAt = now - (j.ageMinutes ?? 0) * MINUTE - (count - index);
  const per = j.perTask ?? {};
  const pods: PodSpec[] = j.tasks.map((t, k) => {
    const gpus = t.gpus ?? per.gpus ?? 0;
    const gpuMemory = t.gpuMemory ?? per.gpuMemory ?? 0;
    const name = t.name ?? `${j.name}-${k}`;
    return {
      uid: name,
      name,
      namespace: ns,
      status: t.state ?? "Pending",
      node: t.node ?? null,
      request: {
        cpuMillis: t.cpuMillis ?? per.cpuMillis ?? 0,
        memory: t.memory ?? per.memory ?? 0,
        gpus: gpus >= 1 ? gpus : 0,
        gpuFraction: gpus > 0 && gpus < 1 ? gpus : 0,
        gpuMemory,
        mig: t.migInstances ? { ...t.migInstances } : NO_COUNTS,
        extended: NO_COUNTS,
      },
      gpuGroups: t.gpuGroups?.length ? [...t.gpuGroups] : NO_NAMES,
      gpuDevices: t.gpuDevices ? [...t.gpuDevices] : undefined,
      labels: t.labels ? { ...t.labels } : NO_LABELS,
      subGroup: t.subGroup ?? null,
      priority: t.priority ?? null,
      createdAt: null,
      nodeNames: t.nodeAffinity?.length ? [...t.nodeAffinity] : undefined,
      nodeSelector: t.nodeSelector?.length ? t.nodeSelector.map((r) => ({ ...r })) : undefined,
      tolerations: t.tolerations ?? undefined,
      podAffinity: t.podAffinity ?? undefined,
      podAntiAffinity: t.podAntiAffinity ?? undefined,
      gpuModels: t.gpuModels ?? undefined,
      preferredGpuModels: t.preferredGpuModels ?? undefined,
      legacyMig: t.legacyMig ?? false,
    };
  });
  return {
    uid: j.name,
    name: j.name,
    namespace: ns,
    queue: j.queue,
    priority,
    preemptible: j.preemptible ?? priority < 100,
    minMember: j.minMember ?? j.tasks.length,
    createdAt,
    lastStartAt: j.lastStartMinutesAgo == null ? null : now - j.lastStartMinutesAgo * MINUTE,
    staleSince: j.staleSeconds == null ? null : now - j.staleSeconds * 1000,
    subGroups: !j.subGroups?.length
      ? NO_SUB_GROUPS
      : j.subGroups.map((g) => ({
          name: g.name,
          // a parent's is ignored (it only groups others); a leaf's is required (scenario.ts)
          minMember: g.minMember ?? 0,
          parent: g.parent ?? null,
          topology: constraint(g.topology),
        })),
    topology: constraint(j.topology),
    pods,
  };
}

export function scenarioSnapshot(s: Scenario, now = SIMULATION_NOW): Snapshot {
  return {
    now,
    nodes: nodes(s),
    queues: queues(s, now),
    jobs: s.jobs.map((j, i) => job(j, i, s.jobs.length, now)),
    topologies: (s.topologies ?? []).map((t) => ({ name: t.name, levels: [...t.levels] })),
  };
}

export function scenarioConfig(s: Scenario): SchedulerConfig {
  const c = s.config ?? {};
  const doc: Record<string, unknown> = { actions: s.actions };
  if (c.tiers) doc.tiers = c.tiers;
  if (c.session) doc.session = c.session;
  if (typeof c.queueDepthPerAction === "number") {
    const n = c.queueDepthPerAction;
    doc.queueDepthPerAction = Object.fromEntries(s.actions.map((a) => [a, n]));
  } else if (c.queueDepthPerAction) doc.queueDepthPerAction = c.queueDepthPerAction;
  const cfg = loadSchedulerConfig(doc);
  if (!c.tiers) {
    const base = defaultSchedulerConfig().tiers;
    cfg.tiers = base.map((t) => ({
      plugins: t.plugins.map((p) => {
        let args = { ...(p.arguments ?? {}), ...(c.plugins?.[p.name] ?? {}) };
        if (p.name === "nodeplacement" && c.placement) args = { ...args, ...c.placement };
        return Object.keys(args).length ? { name: p.name, arguments: args } : { name: p.name };
      }),
    }));
  }
  return cfg;
}
