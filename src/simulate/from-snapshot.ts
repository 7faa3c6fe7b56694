// A core snapshot (and the configuration it is scheduled with) → a scenario document that
// `fleetq simulate` reads back into the same snapshot: what `fleetq snapshot export` writes.
// Pure: the live cluster's snapshot comes from the store's loader.
import {
  type NodeSpec,
  type PodGroupSpec,
  type PodSpec,
  type QuotaVector,
  type SchedulerConfig,
  type Snapshot,
  type TopologyConstraintSpec,
  isActiveUsed,
} from "../core/index.js";
import type { Scenario, ScenarioJob, ScenarioTask } from "./scenario.js";

const MINUTE = 60_000;

/** The scenario's `session` keys (the scheduler configuration's other keys are derived). */
const SESSION_KEYS = [
  "allowConsolidatingReclaim",
  "maxConsolidationPreemptees",
  "stalenessGracePeriodSeconds",
  "useSchedulingSignatures",
  "maxScenariosPerJob",
  "maxScenariosPerAction",
  "searchCursorIdleSeconds",
] as const;

export interface ExportOptions {
  /** The scenario's name (default: "snapshot"). */
  name?: string;
  /** Free text: where the snapshot comes from. */
  source?: string;
}

const quota = (q: QuotaVector) => ({ gpu: q.gpu, cpuMillis: q.cpuMillis, memory: q.memory });

function node(n: NodeSpec): Scenario["nodes"][string] {
  const out: Scenario["nodes"][string] = {
    gpus: n.allocatable.gpus,
    cpuMillis: n.allocatable.cpuMillis,
    memory: n.allocatable.memory,
    gpuMemory: n.gpuMemory,
    gpuMemorySynced: n.gpuMemorySynced,
    gpuModel: n.gpuModel,
    maxPods: n.allocatable.pods,
    labels: { ...n.labels },
  };
  if (n.migStrategy) out.migStrategy = n.migStrategy;
  if (Object.keys(n.allocatable.extended).length) out.migInstances = { ...n.allocatable.extended };
  if (n.taints.length) out.taints = n.taints.map((t) => ({ ...t }));
  if (n.unschedulable) out.unschedulable = true;
  if (!n.ready) out.ready = false;
  if (n.gpuDevices?.length)
    out.gpuDevices = [...n.gpuDevices]
      .sort((a, b) => a.index - b.index)
      .map((d) => ({ nvlinkDomain: d.nvlinkDomain ?? null, numaNode: d.numaNode ?? null }));
  return out;
}

function constraint(t: TopologyConstraintSpec | null): ScenarioJob["topology"] {
  return t ? { topologyName: t.topology, required: t.required, preferred: t.preferred } : null;
}

function task(p: PodSpec, name: string): ScenarioTask {
  const r = p.request;
  const t: ScenarioTask = {
    name,
    state: p.status,
    // The scenario's `node` is kept only where the pod holds its node.
    node: isActiveUsed(p.status) ? p.node : null,
    gpus: r.gpuFraction > 0 ? r.gpuFraction : r.gpus,
    cpuMillis: r.cpuMillis,
    memory: r.memory,
    gpuMemory: r.gpuMemory,
  };
  if (Object.keys(r.mig).length) t.migInstances = { ...r.mig };
  if (p.gpuGroups.length) t.gpuGroups = [...p.gpuGroups];
  if (p.gpuDevices?.length && t.node) t.gpuDevices = [...p.gpuDevices];
  if (p.subGroup) t.subGroup = p.subGroup;
  if (p.priority !== null) t.priority = p.priority;
  if (Object.keys(p.labels).length) t.labels = { ...p.labels };
  if (p.nodeNames?.length) t.nodeAffinity = [...p.nodeNames];
  if (p.nodeSelector?.length)
    t.nodeSelector = p.nodeSelector.map((s) => ({
      key: s.key,
      operator: s.operator,
      ...(s.values ? { values: [...s.values] } : {}),
    }));
  if (p.tolerations?.length) t.tolerations = p.tolerations.map((x) => ({ ...x }));
  if (p.podAffinity?.length) t.podAffinity = p.podAffinity.map((x) => ({ ...x }));
  if (p.podAntiAffinity?.length) t.podAntiAffinity = p.podAntiAffinity.map((x) => ({ ...x }));
  if (p.gpuModels?.length) t.gpuModels = [...p.gpuModels];
  if (p.preferredGpuModels?.length) t.preferredGpuModels = [...p.preferredGpuModels];
  if (p.legacyMig) t.legacyMig = true;
  return t;
}

/** Scenario job names are unique: a job's own name, or `name~<end of its uid>` when several
 * jobs of the snapshot share it. */
export function scenarioJobNames(jobs: readonly PodGroupSpec[]): Map<string, string> {
  const count = new Map<string, number>();
  for (const j of jobs) count.set(j.name, (count.get(j.name) ?? 0) + 1);
  const out = new Map<string, string>();
  const taken = new Set<string>();
  for (const j of jobs) {
    const base = count.get(j.name)! > 1 ? `${j.name}~${j.uid.replace(/-/g, "").slice(-8)}` : j.name;
    let name = base;
    for (let i = 2; taken.has(name) || (name !== j.name && count.has(name)); i++) name = `${base}~${i}`;
    taken.add(name);
    out.set(j.uid, name);
  }
  return out;
}

function job(j: PodGroupSpec, name: string, now: number): ScenarioJob {
  const out: ScenarioJob = {
    name,
    namespace: j.namespace,
    queue: j.queue,
    priority: j.priority,
    preemptible: j.preemptible,
    minMember: j.minMember,
    ageMinutes: Math.max(0, (now - j.createdAt) / MINUTE),
    lastStartMinutesAgo: j.lastStartAt === null ? null : (now - j.lastStartAt) / MINUTE,
    staleSeconds: j.staleSince === null ? null : (now - j.staleSince) / 1000,
    tasks: j.pods.map((p) => task(p, `${name}/${p.name}`)),
  };
  if (j.subGroups.length)
    out.subGroups = j.subGroups.map((g) => ({
      name: g.name,
      minMember: g.minMember,
      parent: g.parent,
      topology: constraint(g.topology),
    }));
  if (j.topology) out.topology = constraint(j.topology);
  return out;
}

/**
 * The snapshot as a scenario: its nodes, queues (in creation order, with their effective quotas),
 * jobs (in creation order, ages relative to the snapshot's `now`) with every pod in its state and
 * on its node, its topologies, and the configuration's actions, plugins and session settings.
 * Not carried: a queue's decayed usage (time-based fair share) and pods' nominations.
 */
export function snapshotScenario(
  snapshot: Snapshot,
  config: SchedulerConfig,
  opts: ExportOptions = {},
): Scenario {
  const now = snapshot.now;
  const names = scenarioJobNames(snapshot.jobs);
  const jobs = [...snapshot.jobs].sort(
    (a, b) => a.createdAt - b.createdAt || (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0),
  );
  const queues = [...snapshot.queues].sort(
    (a, b) => a.createdAt - b.createdAt || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
  );
  const session: Record<string, unknown> = {};
  for (const k of SESSION_KEYS) session[k] = config.session[k];
  const depth = config.queueDepthPerAction;
  return {
    name: opts.name ?? "snapshot",
    ...(opts.source ? { source: opts.source } : {}),
    actions: [...config.actions],
    config: {
      tiers: config.tiers.map((t) => ({
        plugins: t.plugins.map((p) =>
          p.arguments ? { name: p.name, arguments: { ...p.arguments } } : { name: p.name },
        ),
      })),
      session: session as NonNullable<Scenario["config"]>["session"],
      ...(Object.keys(depth).length ? { queueDepthPerAction: { ...(depth as Record<string, number>) } } : {}),
    },
    nodes: Object.fromEntries(snapshot.nodes.map((n) => [n.name, node(n)])),
    queues: queues.map((q) => {
      const out: Scenario["queues"][number] = {
        name: q.name,
        parent: q.parent,
        priority: q.priority,
        deserved: quota(q.deserved),
        limit: quota(q.limit),
        overQuotaWeight: quota(q.overQuotaWeight),
      };
      if (q.preemptMinRuntimeSeconds != null) out.preemptMinRuntime = q.preemptMinRuntimeSeconds;
      if (q.reclaimMinRuntimeSeconds != null) out.reclaimMinRuntime = q.reclaimMinRuntimeSeconds;
      return out;
    }),
    jobs: jobs.map((j) => job(j, names.get(j.uid)!, now)),
    topologies: snapshot.topologies.map((t) => ({ name: t.name, levels: [...t.levels] })),
  };
}
