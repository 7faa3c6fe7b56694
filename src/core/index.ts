// The scheduling core's public surface.
export * from "./api/index.js";
export {
  type SchedulerConfig,
  type SessionParams,
  type PluginOption,
  type PluginArguments,
  type Tier,
  ConfigError,
  ACTION_NAMES,
  DEFAULT_PLUGINS,
  defaultSchedulerConfig,
  defaultSessionParams,
  loadSchedulerConfig,
} from "./framework/config.js";
export { Session, type Plugin, type Action } from "./framework/session.js";
export { Statement } from "./framework/statement.js";
export { SessionCarry } from "./framework/carry/session-carry.js";
export { searchCursorError } from "./framework/search-cursors.js";
export { PluginRegistry, defaultPluginRegistry, type PluginFactory } from "./plugins/registry.js";
// An action by name, for callers that run a cycle's actions themselves (simulations, estimates).
export { createAction } from "./actions/registry.js";
export { runSession, computeFairShare, openSession, sessionResult, type RunOptions } from "./scheduler.js";
export { advanceSnapshot } from "./advance.js";
export { resultHoldsUntil } from "./holds-until.js";
// The core's duration syntax and seeded generator, so scenarios read durations as the
// configuration does and estimates and generated clusters replay the same draws.
export { parseDurationSeconds } from "./util/duration.js";
export { seededRandom } from "./util/random.js";
