// Adds GET /metrics to the API server's Express app.
import type { Express } from "express";
import { Registry } from "prom-client";
import type { SchedulerConfig } from "../core/index.js";
import type { Store } from "../store/index.js";
import { registerControlPlaneMetrics } from "./control-plane-metrics.js";
import { metricsHandler, processMetrics } from "./metrics-endpoint.js";

export function mountMetrics(
  app: Express,
  store: Store,
  config: SchedulerConfig | undefined,
  others: readonly Registry[] = [],
): void {
  const own = new Registry();
  registerControlPlaneMetrics(own, store, config);
  app.get(
    "/metrics",
    metricsHandler(() => [processMetrics(), own, ...others]),
  );
}
