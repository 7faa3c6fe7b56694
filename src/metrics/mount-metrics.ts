// Adds GET /metrics to the API server's Express app, for holders of an API token: each scrape
// reads the database (fair shares of every cluster), so it is not for anyone who can reach the port.
import type { Express, Request } from "express";
import { Registry } from "prom-client";
import type { SchedulerConfig } from "../core/index.js";
import type { Store } from "../store/index.js";
import { registerControlPlaneMetrics } from "./control-plane-metrics.js";
import { metricsHandler, processMetrics } from "./metrics-endpoint.js";
import { transitionMetrics } from "./transition-metrics.js";

export function mountMetrics(
  app: Express,
  store: Store,
  config: SchedulerConfig | undefined,
  others: readonly Registry[],
  /** Whether the request carries a valid token (any role: every role may read these figures). */
  authorized: (req: Request) => Promise<boolean>,
): void {
  const own = new Registry();
  registerControlPlaneMetrics(own, store, config);
  const serve = metricsHandler(() => [processMetrics(), own, transitionMetrics, ...others]);
  app.get("/metrics", async (req, res) => {
    if (!(await authorized(req))) {
      res
        .status(401)
        .setHeader("www-authenticate", 'Bearer realm="fleetq"')
        .type("text/plain")
        .send("an API token is needed: Authorization: Bearer <token> (a VIEWER token is enough)\n");
      return;
    }
    await serve(req, res);
  });
}
