// The scenario file contract (docs/scenario-format.md) as strict checks: unknown keys and wrong
// types are refused with the field's path.
import { isActiveUsed } from "../core/index.js";
import {
  anything,
  array,
  bool,
  either,
  maybe,
  num,
  object,
  oneOf,
  optional,
  type Out,
  record,
  ShapeError,
  type ShapePath,
  str,
} from "./shape.js";

const quota = object({
  gpu: maybe(num),
  cpuMillis: maybe(num),
  memory: maybe(num),
});
const labels = record(str);
const counts = record(num);
const STATES = [
  "Pending",
  "Running",
  "Releasing",
  "Pipelined",
  "Allocated",
  "Bound",
  "Binding",
  "Succeeded",
  "Failed",
  "Gated",
] as const;
const ACTIONS = ["allocate", "consolidation", "reclaim", "preempt", "stalegangeviction"] as const;
const EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"] as const;
const affinityTerm = object({ matchLabels: labels, topologyKey: str });
const topologyConstraint = object({
  topologyName: maybe(str),
  required: maybe(str),
  preferred: maybe(str),
});
const request = {
  gpus: maybe(num),
  cpuMillis: maybe(num),
  memory: maybe(num),
  gpuMemory: maybe(num),
};

export const nodeSchema = object({
  gpus: optional(num),
  cpuMillis: optional(num),
  memory: optional(num),
  gpuMemory: optional(num),
  gpuMemorySynced: optional(bool),
  gpuModel: maybe(str),
  maxPods: optional(num),
  migStrategy: maybe(oneOf(["single", "mixed"])),
  migInstances: maybe(counts),
  labels: optional(labels),
  taints: optional(array(object({ key: str, value: optional(str), effect: oneOf(EFFECTS) }))),
  unschedulable: optional(bool),
  /** false: the node is not ready (it takes no pods and does not count toward the cluster's total). */
  ready: optional(bool),
  /** Device topology (one entry per GPU, in index order): which NVLink/NVSwitch domain and NUMA node. */
  gpuDevices: optional(array(object({ nvlinkDomain: maybe(str), numaNode: maybe(num) }))),
});

export const taskSchema = object({
  name: optional(str),
  state: optional(oneOf(STATES)),
  node: maybe(str),
  ...request,
  migInstances: maybe(counts),
  legacyMig: optional(bool),
  gpuGroups: maybe(array(str)),
  gpuDevices: maybe(array(num)),
  subGroup: maybe(str),
  nodeAffinity: maybe(array(str)),
  priority: maybe(num),
  labels: maybe(labels),
  podAffinity: maybe(array(affinityTerm)),
  podAntiAffinity: maybe(array(affinityTerm)),
  gpuModels: maybe(array(str)),
  /** Node label requirements, all of which a node must meet (Kubernetes label-selector operators). */
  nodeSelector: maybe(
    array(
      object({
        key: str,
        operator: oneOf(["In", "NotIn", "Exists", "DoesNotExist"]),
        values: optional(array(str)),
      }),
    ),
  ),
  preferredGpuModels: maybe(array(str)),
  tolerations: maybe(
    array(
      object({
        key: optional(str),
        operator: optional(oneOf(["Equal", "Exists"])),
        value: optional(str),
        effect: optional(oneOf(EFFECTS)),
      }),
    ),
  ),
});

export const jobSchema = object({
  name: str,
  namespace: optional(str),
  queue: str,
  priority: optional(num),
  preemptible: maybe(bool),
  minMember: maybe(num),
  ageMinutes: optional(num),
  lastStartMinutesAgo: maybe(num),
  staleSeconds: maybe(num),
  deleteOnEvict: optional(bool),
  perTask: optional(object(request)),
  subGroups: maybe(
    array(
      object({
        name: str,
        // required on a leaf; a parent only groups others (checkReferences)
        minMember: maybe(num),
        parent: maybe(str),
        topology: maybe(topologyConstraint),
      }),
    ),
  ),
  topology: maybe(topologyConstraint),
  tasks: array(taskSchema),
});

const expectEntry = object({
  status: optional(oneOf(STATES)),
  node: maybe(str),
  gpus: maybe(num),
  cpuMillis: maybe(num),
  memory: maybe(num),
  gpusAccepted: maybe(num),
  gpuGroups: maybe(array(str)),
  lastStartOlderThanSeconds: maybe(num),
  fitError: maybe(str),
});

export const scenarioSchema = object({
  name: str,
  source: optional(str),
  origin: optional(record(anything)),
  features: optional(array(str)),
  actions: array(oneOf(ACTIONS), { min: 1 }),
  config: optional(
    object({
      placement: optional(
        object({
          gpu: optional(oneOf(["binpack", "spread"])),
          cpu: optional(oneOf(["binpack", "spread"])),
        }),
      ),
      plugins: optional(record(record(anything))),
      queueDepthPerAction: maybe(either(num, record(num), "a number or an object of numbers")),
      tiers: optional(
        array(object({ plugins: array(object({ name: str, arguments: optional(record(anything)) })) })),
      ),
      session: optional(
        object({
          allowConsolidatingReclaim: optional(bool),
          maxConsolidationPreemptees: optional(num),
          stalenessGracePeriodSeconds: optional(num),
          useSchedulingSignatures: optional(bool),
          maxScenariosPerJob: optional(num),
          maxScenariosPerAction: optional(num),
          searchCursorIdleSeconds: optional(num),
        }),
      ),
    }),
  ),
  rounds: maybe(object({ untilMatch: optional(num), afterMatch: optional(num) })),
  nodes: record(nodeSchema),
  queues: array(
    object({
      name: str,
      parent: maybe(str),
      priority: optional(num),
      deserved: optional(quota),
      limit: maybe(quota),
      overQuotaWeight: optional(quota),
      preemptMinRuntime: maybe(either(str, num, "a duration or a number of seconds")),
      reclaimMinRuntime: maybe(either(str, num, "a duration or a number of seconds")),
    }),
  ),
  jobs: array(jobSchema),
  topologies: optional(array(object({ name: str, levels: array(str) }))),
  expect: maybe(
    object({
      jobs: optional(record(expectEntry)),
      tasks: optional(record(expectEntry)),
      nodes: optional(record(object({ idleGpus: optional(num), releasingGpus: optional(num) }))),
      maxBinds: maybe(num),
      maxEvictions: maybe(num),
      maxPipelines: maybe(num),
    }),
  ),
});

export type Scenario = Out<typeof scenarioSchema>;
export type ScenarioJob = Out<typeof jobSchema>;
export type ScenarioTask = Out<typeof taskSchema>;
export type ExpectEntry = Out<typeof expectEntry>;

/** A scenario file that cannot be used, naming the field. */
export class ScenarioError extends Error {
  constructor(
    readonly file: string,
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${file}: ${field}: ${reason}`);
  }
}

/** "jobs[0].tasks[1].node"; "(root)" for the document itself. */
function fieldOf(path: ShapePath): string {
  if (!path.length) return "(root)";
  return path
    .map((p) => (typeof p === "number" ? `[${p}]` : `.${p}`))
    .join("")
    .replace(/^\./, "");
}

/** Validate a parsed document; throws ScenarioError naming the first bad field. */
export function validateScenario(doc: unknown, file: string): Scenario {
  let s: Scenario;
  try {
    s = scenarioSchema(doc, []);
  } catch (e) {
    if (e instanceof ShapeError) throw new ScenarioError(file, fieldOf(e.path), e.reason);
    throw e;
  }
  checkReferences(s, file);
  return s;
}

function checkReferences(s: Scenario, file: string): void {
  const queues = new Set<string>();
  s.queues.forEach((q, i) => {
    if (queues.has(q.name)) throw new ScenarioError(file, `queues[${i}].name`, `duplicate queue ${q.name}`);
    queues.add(q.name);
  });
  s.queues.forEach((q, i) => {
    if (q.parent && !queues.has(q.parent))
      throw new ScenarioError(file, `queues[${i}].parent`, `unknown queue ${q.parent}`);
  });
  const jobs = new Set<string>();
  const tasks = new Set<string>();
  const none = new Set<string>();
  for (let i = 0; i < s.jobs.length; i++) {
    const j = s.jobs[i]!;
    const at = () => `jobs[${i}]`;
    if (jobs.has(j.name)) throw new ScenarioError(file, `${at()}.name`, `duplicate job ${j.name}`);
    jobs.add(j.name);
    if (!queues.has(j.queue)) throw new ScenarioError(file, `${at()}.queue`, `unknown queue ${j.queue}`);
    let groups = none;
    if (j.subGroups?.length) {
      groups = new Set(j.subGroups.map((g) => g.name));
      const parents = new Set(j.subGroups.map((g) => g.parent));
      j.subGroups.forEach((g, k) => {
        if (g.parent && !groups.has(g.parent))
          throw new ScenarioError(file, `${at()}.subGroups[${k}].parent`, `unknown sub-group ${g.parent}`);
        if (g.minMember == null && !parents.has(g.name))
          throw new ScenarioError(file, `${at()}.subGroups[${k}].minMember`, "required on a leaf sub-group");
      });
    }
    for (let k = 0; k < j.tasks.length; k++) {
      const t = j.tasks[k]!;
      const name = t.name ?? `${j.name}-${k}`;
      if (tasks.has(name))
        throw new ScenarioError(file, `${at()}.tasks[${k}].name`, `duplicate task ${name}`);
      tasks.add(name);
      const state = t.state ?? "Pending";
      if (isActiveUsed(state)) {
        if (!t.node) throw new ScenarioError(file, `${at()}.tasks[${k}].node`, `required for state ${state}`);
        if (!s.nodes[t.node])
          throw new ScenarioError(file, `${at()}.tasks[${k}].node`, `unknown node ${t.node}`);
      }
      if (t.subGroup && !groups.has(t.subGroup))
        throw new ScenarioError(file, `${at()}.tasks[${k}].subGroup`, `unknown sub-group ${t.subGroup}`);
    }
  }
  for (const n of Object.keys(s.expect?.jobs ?? {}))
    if (!jobs.has(n)) throw new ScenarioError(file, `expect.jobs.${n}`, `unknown job ${n}`);
  for (const n of Object.keys(s.expect?.tasks ?? {}))
    if (!tasks.has(n)) throw new ScenarioError(file, `expect.tasks.${n}`, `unknown task ${n}`);
  for (const n of Object.keys(s.expect?.nodes ?? {}))
    if (!s.nodes[n]) throw new ScenarioError(file, `expect.nodes.${n}`, `unknown node ${n}`);
}
