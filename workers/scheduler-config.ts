// The cycles' scheduler configuration: given in code, else the KAI-shaped YAML/JSON file named by
// FLEETQ_SCHEDULER_CONFIG (docs/plugins.md), else the core's defaults. Unknown actions, plugins
// or fields are refused with the file and the field named.
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import {
  ConfigError,
  defaultPluginRegistry,
  defaultSchedulerConfig,
  loadSchedulerConfig,
  type SchedulerConfig,
} from "../src/core/index.js";

export const SCHEDULER_CONFIG_ENV = "FLEETQ_SCHEDULER_CONFIG";

export function schedulerConfigFromFile(path: string): SchedulerConfig {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new Error(`${SCHEDULER_CONFIG_ENV}: cannot read ${path}: ${(e as Error).message}`);
  }
  try {
    return loadSchedulerConfig(parseYaml(text), defaultPluginRegistry().names());
  } catch (e) {
    if (e instanceof ConfigError) throw new Error(`${path}: ${e.message}`);
    throw new Error(`${path}: not a scheduler configuration: ${(e as Error).message}`);
  }
}

export function resolveSchedulerConfig(
  given: SchedulerConfig | undefined,
  env: NodeJS.ProcessEnv = process.env,
): SchedulerConfig {
  if (given) {
    const known = defaultPluginRegistry();
    for (const p of given.tiers.flatMap((t) => t.plugins))
      if (!known.has(p.name)) throw new Error(`workers: schedulerConfig names the unknown plugin ${p.name}`);
    return given;
  }
  const path = env[SCHEDULER_CONFIG_ENV];
  return path ? schedulerConfigFromFile(path) : defaultSchedulerConfig();
}
