// Scheduler configuration: the ordered action list and the plugin tiers with their
// arguments, in the shape of KAI's scheduler configuration, plus session parameters.
import type { ActionName } from "../api/result.js";

export type PluginArguments = Record<string, unknown>;

export interface PluginOption {
  name: string;
  arguments?: PluginArguments;
}

export interface Tier {
  plugins: PluginOption[];
}

export interface SessionParams {
  /** Reclaim may move (re-place) victims instead of only evicting them. */
  allowConsolidatingReclaim: boolean;
  /** How many preemptee jobs consolidation may consider: -1 unlimited, 0 disables it. */
  maxConsolidationPreemptees: number;
  /** How long a gang may stay below its minimum before it is evicted; negative = never. */
  stalenessGracePeriodSeconds: number;
  /** Smallest GPU memory of any node (MiB): a pending GPU-memory request counts memory/this GPUs. */
  minNodeGpuMemory: number;
  /**
   * Disruptive actions skip a job whose scheduling signature matches a job that failed
   * earlier in the action (per queue; consolidation: overall) unless it is easier to
   * schedule (KAI: UseSchedulingSignatures, on in production, off in KAI's test harness).
   */
  useSchedulingSignatures: boolean;
  /**
   * Victim scenarios one job's attempt may examine in a disruptive action; -1 = unlimited
   * (as KAI). A stopped search goes on in the next cycle from its cursor.
   */
  maxScenariosPerJob: number;
  /** Victim scenarios one disruptive action may examine in all; -1 = unlimited (as KAI). */
  maxScenariosPerAction: number;
  /** A search cursor no session takes for this long after it was left is dropped; -1 = never. */
  searchCursorIdleSeconds: number;
}

export interface SchedulerConfig {
  actions: ActionName[];
  tiers: Tier[];
  /** Cap of jobs tried per queue per action (absent = unlimited). */
  queueDepthPerAction: Partial<Record<ActionName, number>>;
  session: SessionParams;
}

export const ACTION_NAMES: readonly ActionName[] = [
  "allocate",
  "consolidation",
  "reclaim",
  "preempt",
  "stalegangeviction",
];

/** KAI's default plugin list, in its order (conf_util/scheduler_conf_util.go). */
export const DEFAULT_PLUGINS: readonly string[] = [
  "predicates",
  "proportion",
  "priority",
  "elastic",
  "kubeflow",
  "ray",
  "nodeavailability",
  "gpusharingorder",
  "gpupack",
  "resourcetype",
  "subgrouporder",
  "taskorder",
  "nominatednode",
  "dynamicresources",
  "nodeplacement",
  "minruntime",
  "topology",
  "snapshot",
];

export function defaultSessionParams(): SessionParams {
  return {
    allowConsolidatingReclaim: true,
    maxConsolidationPreemptees: -1,
    stalenessGracePeriodSeconds: 60,
    minNodeGpuMemory: 100,
    useSchedulingSignatures: true,
    // Bounded so that a contended cycle on a large cluster stays within its target
    // (docs/benchmarks.md, `bench:core`); over a few cycles the cursors reach the state an
    // unbounded search reaches in one (`bench:convergence`).
    maxScenariosPerJob: 128,
    maxScenariosPerAction: 1024,
    searchCursorIdleSeconds: 300,
  };
}

export function defaultSchedulerConfig(): SchedulerConfig {
  return {
    actions: [...ACTION_NAMES],
    tiers: [
      {
        plugins: DEFAULT_PLUGINS.map((name) =>
          name === "nodeplacement" ? { name, arguments: { gpu: "binpack", cpu: "binpack" } } : { name },
        ),
      },
    ],
    queueDepthPerAction: {},
    session: defaultSessionParams(),
  };
}

export class ConfigError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
  }
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

function checkKeys(o: Record<string, unknown>, allowed: string[], at: string): void {
  for (const k of Object.keys(o))
    if (!allowed.includes(k))
      throw new ConfigError(at ? `${at}.${k}` : k, `unknown field (allowed: ${allowed.join(", ")})`);
}

function parseActions(v: unknown): ActionName[] {
  const list =
    typeof v === "string"
      ? v
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean)
      : v;
  if (!Array.isArray(list)) throw new ConfigError("actions", "must be a list or a comma-separated string");
  return list.map((a, i) => {
    if (typeof a !== "string" || !(ACTION_NAMES as readonly string[]).includes(a))
      throw new ConfigError(
        `actions[${i}]`,
        `unknown action ${JSON.stringify(a)} (known: ${ACTION_NAMES.join(", ")})`,
      );
    return a as ActionName;
  });
}

function parseTiers(v: unknown, knownPlugins: ReadonlySet<string> | null): Tier[] {
  if (!Array.isArray(v)) throw new ConfigError("tiers", "must be a list");
  return v.map((tier, i) => {
    if (!isObject(tier) || !Array.isArray(tier.plugins))
      throw new ConfigError(`tiers[${i}].plugins`, "must be a list");
    checkKeys(tier, ["plugins"], `tiers[${i}]`);
    return {
      plugins: tier.plugins.map((p, j) => {
        const at = `tiers[${i}].plugins[${j}]`;
        if (!isObject(p) || typeof p.name !== "string")
          throw new ConfigError(`${at}.name`, "must be a string");
        checkKeys(p, ["name", "arguments"], at);
        if (knownPlugins && !knownPlugins.has(p.name))
          throw new ConfigError(`${at}.name`, `unknown plugin ${p.name}`);
        if (p.arguments !== undefined && !isObject(p.arguments))
          throw new ConfigError(`${at}.arguments`, "must be a mapping");
        return p.arguments ? { name: p.name, arguments: p.arguments as PluginArguments } : { name: p.name };
      }),
    };
  });
}

/** Session parameters that are counts or limits: whole numbers, -1 meaning none. */
const COUNTS: readonly (keyof SessionParams)[] = [
  "maxConsolidationPreemptees",
  "maxScenariosPerJob",
  "maxScenariosPerAction",
  "searchCursorIdleSeconds",
];

function parseSession(v: unknown, base: SessionParams): SessionParams {
  if (!isObject(v)) throw new ConfigError("session", "must be a mapping");
  const keys = Object.keys(base) as (keyof SessionParams)[];
  checkKeys(v, keys, "session");
  const out = { ...base };
  for (const k of keys) {
    if (v[k] === undefined) continue;
    const expected = typeof base[k];
    if (typeof v[k] !== expected) throw new ConfigError(`session.${k}`, `must be a ${expected}`);
    if (COUNTS.includes(k) && (!Number.isInteger(v[k]) || (v[k] as number) < -1))
      throw new ConfigError(`session.${k}`, `must be a whole number, or -1 for no limit (got ${v[k]})`);
    (out as Record<string, unknown>)[k] = v[k];
  }
  return out;
}

/**
 * Read a configuration document (parsed: the caller reads YAML or JSON, so the core loads no
 * parser). Missing parts take KAI's defaults; `tiers`, when given, replace the default plugins
 * entirely.
 */
export function loadSchedulerConfig(
  doc: unknown,
  knownPlugins: ReadonlySet<string> | null = null,
): SchedulerConfig {
  const cfg = defaultSchedulerConfig();
  if (doc === null || doc === undefined) return cfg;
  if (!isObject(doc)) throw new ConfigError("(root)", "must be a mapping");
  checkKeys(doc, ["actions", "tiers", "queueDepthPerAction", "session"], "");
  if (doc.actions !== undefined) cfg.actions = parseActions(doc.actions);
  if (doc.tiers !== undefined) cfg.tiers = parseTiers(doc.tiers, knownPlugins);
  if (doc.queueDepthPerAction !== undefined && doc.queueDepthPerAction !== null) {
    if (!isObject(doc.queueDepthPerAction)) throw new ConfigError("queueDepthPerAction", "must be a mapping");
    for (const [k, n] of Object.entries(doc.queueDepthPerAction)) {
      if (!(ACTION_NAMES as readonly string[]).includes(k))
        throw new ConfigError(`queueDepthPerAction.${k}`, "unknown action");
      if (typeof n !== "number" || !Number.isInteger(n) || n < 0)
        throw new ConfigError(`queueDepthPerAction.${k}`, "must be a non-negative integer");
      cfg.queueDepthPerAction[k as ActionName] = n;
    }
  }
  if (doc.session !== undefined) cfg.session = parseSession(doc.session, cfg.session);
  return cfg;
}

/** The plugins of the configuration, in tier order. */
export function configuredPlugins(cfg: SchedulerConfig): PluginOption[] {
  return cfg.tiers.flatMap((t) => t.plugins);
}
