// The scenario file contract (shared/scenario-format.md) as a strict schema: unknown
// keys and wrong types are refused with the field's path.
import { z } from "zod";
import { isActiveUsed } from "../core/api/status.js";

const num = z.number();
const quota = z.strictObject({
  gpu: num.nullable().optional(),
  cpuMillis: num.nullable().optional(),
  memory: num.nullable().optional(),
});
const labels = z.record(z.string(), z.string());
const counts = z.record(z.string(), num);
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
const affinityTerm = z.strictObject({ matchLabels: labels, topologyKey: z.string() });
const topologyConstraint = z.strictObject({
  topologyName: z.string().nullable().optional(),
  required: z.string().nullable().optional(),
  preferred: z.string().nullable().optional(),
});
const request = {
  gpus: num.nullable().optional(),
  cpuMillis: num.nullable().optional(),
  memory: num.nullable().optional(),
  gpuMemory: num.nullable().optional(),
};

export const nodeSchema = z.strictObject({
  gpus: num.optional(),
  cpuMillis: num.optional(),
  memory: num.optional(),
  gpuMemory: num.optional(),
  gpuMemorySynced: z.boolean().optional(),
  gpuModel: z.string().nullable().optional(),
  maxPods: num.optional(),
  migStrategy: z.enum(["single", "mixed"]).nullable().optional(),
  migInstances: counts.nullable().optional(),
  labels: labels.optional(),
  taints: z
    .array(
      z.strictObject({
        key: z.string(),
        value: z.string().optional(),
        effect: z.enum(["NoSchedule", "PreferNoSchedule", "NoExecute"]),
      }),
    )
    .optional(),
  unschedulable: z.boolean().optional(),
  /** false: the node is not ready (it takes no pods and does not count toward the cluster's total). */
  ready: z.boolean().optional(),
  /** Device topology (one entry per GPU, in index order): which NVLink/NVSwitch domain and NUMA node. */
  gpuDevices: z
    .array(
      z.strictObject({ nvlinkDomain: z.string().nullable().optional(), numaNode: num.nullable().optional() }),
    )
    .optional(),
});

export const taskSchema = z.strictObject({
  name: z.string().optional(),
  state: z.enum(STATES).optional(),
  node: z.string().nullable().optional(),
  ...request,
  migInstances: counts.nullable().optional(),
  legacyMig: z.boolean().optional(),
  gpuGroups: z.array(z.string()).nullable().optional(),
  gpuDevices: z.array(num).nullable().optional(),
  subGroup: z.string().nullable().optional(),
  nodeAffinity: z.array(z.string()).nullable().optional(),
  priority: num.nullable().optional(),
  labels: labels.nullable().optional(),
  podAffinity: z.array(affinityTerm).nullable().optional(),
  podAntiAffinity: z.array(affinityTerm).nullable().optional(),
  gpuModels: z.array(z.string()).nullable().optional(),
  /** Node label requirements, all of which a node must meet (Kubernetes label-selector operators). */
  nodeSelector: z
    .array(
      z.strictObject({
        key: z.string(),
        operator: z.enum(["In", "NotIn", "Exists", "DoesNotExist"]),
        values: z.array(z.string()).optional(),
      }),
    )
    .nullable()
    .optional(),
  preferredGpuModels: z.array(z.string()).nullable().optional(),
  tolerations: z
    .array(
      z.strictObject({
        key: z.string().optional(),
        operator: z.enum(["Equal", "Exists"]).optional(),
        value: z.string().optional(),
        effect: z.enum(["NoSchedule", "PreferNoSchedule", "NoExecute"]).optional(),
      }),
    )
    .nullable()
    .optional(),
});

export const jobSchema = z.strictObject({
  name: z.string(),
  namespace: z.string().optional(),
  queue: z.string(),
  priority: num.optional(),
  preemptible: z.boolean().nullable().optional(),
  minMember: num.nullable().optional(),
  ageMinutes: num.optional(),
  lastStartMinutesAgo: num.nullable().optional(),
  staleSeconds: num.nullable().optional(),
  deleteOnEvict: z.boolean().optional(),
  perTask: z.strictObject(request).optional(),
  subGroups: z
    .array(
      z.strictObject({
        name: z.string(),
        // required on a leaf; a parent only groups others (checkReferences)
        minMember: num.nullable().optional(),
        parent: z.string().nullable().optional(),
        topology: topologyConstraint.nullable().optional(),
      }),
    )
    .nullable()
    .optional(),
  topology: topologyConstraint.nullable().optional(),
  tasks: z.array(taskSchema),
});

const expectEntry = z.strictObject({
  status: z.enum(STATES).optional(),
  node: z.string().nullable().optional(),
  gpus: num.nullable().optional(),
  cpuMillis: num.nullable().optional(),
  memory: num.nullable().optional(),
  gpusAccepted: num.nullable().optional(),
  gpuGroups: z.array(z.string()).nullable().optional(),
  lastStartOlderThanSeconds: num.nullable().optional(),
  fitError: z.string().nullable().optional(),
});

export const scenarioSchema = z.strictObject({
  name: z.string(),
  source: z.string().optional(),
  origin: z.record(z.string(), z.unknown()).optional(),
  features: z.array(z.string()).optional(),
  actions: z.array(z.enum(ACTIONS)).min(1),
  config: z
    .strictObject({
      placement: z
        .strictObject({
          gpu: z.enum(["binpack", "spread"]).optional(),
          cpu: z.enum(["binpack", "spread"]).optional(),
        })
        .optional(),
      plugins: z.record(z.string(), z.record(z.string(), z.unknown())).optional(),
      queueDepthPerAction: z
        .union([num, z.record(z.string(), num)])
        .nullable()
        .optional(),
      tiers: z
        .array(
          z.strictObject({
            plugins: z.array(
              z.strictObject({ name: z.string(), arguments: z.record(z.string(), z.unknown()).optional() }),
            ),
          }),
        )
        .optional(),
      session: z
        .strictObject({
          allowConsolidatingReclaim: z.boolean().optional(),
          maxConsolidationPreemptees: num.optional(),
          stalenessGracePeriodSeconds: num.optional(),
          useSchedulingSignatures: z.boolean().optional(),
          maxScenariosPerJob: num.optional(),
          maxScenariosPerAction: num.optional(),
          searchCursorIdleSeconds: num.optional(),
        })
        .optional(),
    })
    .optional(),
  rounds: z.strictObject({ untilMatch: num.optional(), afterMatch: num.optional() }).nullable().optional(),
  nodes: z.record(z.string(), nodeSchema),
  queues: z.array(
    z.strictObject({
      name: z.string(),
      parent: z.string().nullable().optional(),
      priority: num.optional(),
      deserved: quota.optional(),
      limit: quota.nullable().optional(),
      overQuotaWeight: quota.optional(),
      preemptMinRuntime: z.union([z.string(), num]).nullable().optional(),
      reclaimMinRuntime: z.union([z.string(), num]).nullable().optional(),
    }),
  ),
  jobs: z.array(jobSchema),
  topologies: z.array(z.strictObject({ name: z.string(), levels: z.array(z.string()) })).optional(),
  expect: z
    .strictObject({
      jobs: z.record(z.string(), expectEntry).optional(),
      tasks: z.record(z.string(), expectEntry).optional(),
      nodes: z
        .record(z.string(), z.strictObject({ idleGpus: num.optional(), releasingGpus: num.optional() }))
        .optional(),
      maxBinds: num.nullable().optional(),
      maxEvictions: num.nullable().optional(),
      maxPipelines: num.nullable().optional(),
    })
    .nullable()
    .optional(),
});

export type Scenario = z.infer<typeof scenarioSchema>;
export type ScenarioJob = z.infer<typeof jobSchema>;
export type ScenarioTask = z.infer<typeof taskSchema>;
export type ExpectEntry = z.infer<typeof expectEntry>;

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

/** Validate a parsed document; throws ScenarioError naming the first bad field. */
export function validateScenario(doc: unknown, file: string): Scenario {
  const r = scenarioSchema.safeParse(doc);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    const field = issue.path.length
      ? issue.path
          .map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`))
          .join("")
          .replace(/^\./, "")
      : "(root)";
    const msg =
      issue.code === "unrecognized_keys" ? `unknown field(s) ${issue.keys.join(", ")}` : issue.message;
    throw new ScenarioError(file, field, msg);
  }
  checkReferences(r.data, file);
  return r.data;
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
  s.jobs.forEach((j, i) => {
    const at = `jobs[${i}]`;
    if (jobs.has(j.name)) throw new ScenarioError(file, `${at}.name`, `duplicate job ${j.name}`);
    jobs.add(j.name);
    if (!queues.has(j.queue)) throw new ScenarioError(file, `${at}.queue`, `unknown queue ${j.queue}`);
    const groups = new Set((j.subGroups ?? []).map((g) => g.name));
    const parents = new Set((j.subGroups ?? []).map((g) => g.parent));
    (j.subGroups ?? []).forEach((g, k) => {
      if (g.parent && !groups.has(g.parent))
        throw new ScenarioError(file, `${at}.subGroups[${k}].parent`, `unknown sub-group ${g.parent}`);
      if (g.minMember == null && !parents.has(g.name))
        throw new ScenarioError(file, `${at}.subGroups[${k}].minMember`, "required on a leaf sub-group");
    });
    j.tasks.forEach((t, k) => {
      const name = t.name ?? `${j.name}-${k}`;
      if (tasks.has(name)) throw new ScenarioError(file, `${at}.tasks[${k}].name`, `duplicate task ${name}`);
      tasks.add(name);
      const state = t.state ?? "Pending";
      if (isActiveUsed(state)) {
        if (!t.node) throw new ScenarioError(file, `${at}.tasks[${k}].node`, `required for state ${state}`);
        if (!s.nodes[t.node])
          throw new ScenarioError(file, `${at}.tasks[${k}].node`, `unknown node ${t.node}`);
      }
      if (t.subGroup && !groups.has(t.subGroup))
        throw new ScenarioError(file, `${at}.tasks[${k}].subGroup`, `unknown sub-group ${t.subGroup}`);
    });
  });
  for (const n of Object.keys(s.expect?.jobs ?? {}))
    if (!jobs.has(n)) throw new ScenarioError(file, `expect.jobs.${n}`, `unknown job ${n}`);
  for (const n of Object.keys(s.expect?.tasks ?? {}))
    if (!tasks.has(n)) throw new ScenarioError(file, `expect.tasks.${n}`, `unknown task ${n}`);
  for (const n of Object.keys(s.expect?.nodes ?? {}))
    if (!s.nodes[n]) throw new ScenarioError(file, `expect.nodes.${n}`, `unknown node ${n}`);
}
