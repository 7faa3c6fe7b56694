// The agent's public entry points (for src/cli and `fleetq dev`).
export { AgentAuthError, type AgentOptions, type RunningAgent, runAgent } from "./agent.js";
export {
  type AgentCommandArgs,
  DEFAULT_API_URL,
  DEFAULT_REDIS_URL,
  loadAgentOptions,
} from "./agent-config.js";
export { type BackendConfig, createBackend } from "./backends/create-backend.js";
export { KubernetesBackend } from "./backends/kubernetes/kubernetes-backend.js";
export { expandNodes, loadClusterFile, parseClusterFile } from "./backends/simulated/cluster-file.js";
export { SimulatedBackend, type SimulationClock } from "./backends/simulated/simulated-backend.js";
export type { ClusterBackend, NodeInventory, PodState, PodStateChange } from "./backends/types.js";
export { ConfigFileError } from "./yaml-file.js";
