// GET /metrics: this process's registries in the Prometheus text format — the API's own
// (database gauges, process metrics) and those of parts running in the same process (the
// workers' registry in `fleetq dev`). Concatenated per scrape, so metrics registered later count.
import type { Request, Response } from "express";
import { collectDefaultMetrics, Registry } from "prom-client";

let processRegistry: Registry | null = null;

/** Node process metrics (CPU, memory, event loop lag), registered once per process. */
export function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry, prefix: "fleetq_" });
  }
  return processRegistry;
}

export async function renderMetrics(registries: readonly Registry[]): Promise<string> {
  const texts = await Promise.all([...new Set(registries)].map((r) => r.metrics()));
  return texts.filter((t) => t.trim()).join("\n");
}

export function metricsHandler(registries: () => readonly Registry[]) {
  return async (_req: Request, res: Response) => {
    try {
      const body = await renderMetrics(registries());
      res.setHeader("content-type", Registry.PROMETHEUS_CONTENT_TYPE);
      res.send(body);
    } catch (e) {
      res
        .status(500)
        .type("text/plain")
        .send(`metrics unavailable: ${(e as Error).message}\n`);
    }
  };
}
