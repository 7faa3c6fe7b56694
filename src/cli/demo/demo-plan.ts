// The demo deployment of `fleetq dev` and `docker compose up`: an organisation with two
// departments of two teams each, quotas on every level (default rows for all clusters, and
// per-cluster overrides), three simulated clusters of different shapes, and tokens.
import type { ResourceName } from "../client/types.js";

export interface DemoQueue {
  name: string;
  parent: string | null;
  priority?: number;
}

export interface DemoQuota {
  queue: string;
  /** null = the default row (every cluster) */
  cluster: string | null;
  resource: ResourceName;
  /** API units: gpu devices, cpu millicores, memory bytes; -1 = unlimited */
  deserved?: number;
  limit?: number;
  overQuotaWeight?: number;
}

const GI = 2 ** 30;
const TI = 2 ** 40;

export const DEMO_QUEUES: readonly DemoQueue[] = [
  { name: "acme", parent: null },
  { name: "research", parent: "acme", priority: 120 },
  { name: "product", parent: "acme" },
  { name: "vision", parent: "research" },
  { name: "llm", parent: "research" },
  { name: "search", parent: "product" },
  { name: "ads", parent: "product" },
];

export const DEMO_QUOTAS: readonly DemoQuota[] = [
  // the organisation: its departments' sum (a queue's non-preemptible jobs stay within its ancestors' quotas too)
  { queue: "acme", cluster: null, resource: "GPU", deserved: 32 },
  { queue: "acme", cluster: null, resource: "CPU", deserved: 1_280_000 },
  { queue: "acme", cluster: null, resource: "MEMORY", deserved: 6 * TI },
  // departments: research deserves more GPUs and weighs more over quota; product more CPU
  { queue: "research", cluster: null, resource: "GPU", deserved: 24, overQuotaWeight: 2 },
  { queue: "research", cluster: null, resource: "CPU", deserved: 256_000 },
  { queue: "research", cluster: null, resource: "MEMORY", deserved: 2 * TI },
  { queue: "product", cluster: null, resource: "GPU", deserved: 8, overQuotaWeight: 1 },
  { queue: "product", cluster: null, resource: "CPU", deserved: 1_024_000 },
  { queue: "product", cluster: null, resource: "MEMORY", deserved: 4 * TI },
  // teams
  { queue: "llm", cluster: null, resource: "GPU", deserved: 16, overQuotaWeight: 2 },
  { queue: "llm", cluster: null, resource: "CPU", deserved: 128_000 },
  { queue: "llm", cluster: null, resource: "MEMORY", deserved: 1 * TI },
  { queue: "vision", cluster: null, resource: "GPU", deserved: 8 },
  { queue: "vision", cluster: null, resource: "CPU", deserved: 64_000 },
  { queue: "vision", cluster: null, resource: "MEMORY", deserved: 512 * GI },
  { queue: "search", cluster: null, resource: "GPU", deserved: 4 },
  { queue: "search", cluster: null, resource: "CPU", deserved: 512_000 },
  { queue: "search", cluster: null, resource: "MEMORY", deserved: 512 * GI },
  { queue: "ads", cluster: null, resource: "GPU", deserved: 4 },
  { queue: "ads", cluster: null, resource: "CPU", deserved: 256_000, limit: 2_048_000 },
  { queue: "ads", cluster: null, resource: "MEMORY", deserved: 512 * GI },
  // per-cluster overrides: ads gets the batch cluster's CPUs; llm may not take all of the small A100 cluster
  { queue: "ads", cluster: "cpu-heavy", resource: "CPU", deserved: 2_048_000, limit: -1 },
  { queue: "llm", cluster: "a100-small", resource: "GPU", limit: 24 },
];

/** The demo's simulated clusters (files under examples/clusters/). */
export const DEMO_CLUSTER_FILES = ["a100-small.yaml", "h100-l4-mixed.yaml", "cpu-heavy.yaml"] as const;

/** MEMBER tokens of the demo: name → the queues it may use. */
export const DEMO_MEMBERS: Readonly<Record<string, readonly string[]>> = {
  "demo-member": ["research", "product"],
};
