// The scheduler configuration the API (fair-share view) and the workers (cycles) share:
// FLEETQ_SCHEDULER_CONFIG names a file; unset = the core's defaults.
import type { SchedulerConfig } from "../core/index.js";
import { SCHEDULER_CONFIG_ENV, schedulerConfigFromFile } from "../../workers/index.js";
import { CliError } from "./exit-codes.js";

export function schedulerConfigFromEnv(env: NodeJS.ProcessEnv = process.env): SchedulerConfig | undefined {
  const file = env[SCHEDULER_CONFIG_ENV];
  if (!file) return undefined;
  try {
    return schedulerConfigFromFile(file);
  } catch (e) {
    throw new CliError((e as Error).message);
  }
}
