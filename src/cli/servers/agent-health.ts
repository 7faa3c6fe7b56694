// The agent's probe endpoints when FLEETQ_AGENT_HEALTH_PORT is set (a Deployment's liveness and
// readiness probes): /healthz answers while the process runs; /readyz once the agent has
// proved its token, registered and delivered its cluster's first complete inventory; /metrics
// what it refused to act on, for alerts on forged requests and look-alike pods.
import { createServer, type Server } from "node:http";

/** What the running agent refused: bind requests not signed by the control plane, pods naming a
 * fleetq job that it cannot prove its own. Both only grow. */
export interface AgentRefusals {
  refusedRequests: number;
  ignoredPods: number;
}

export interface AgentHealth {
  ready(refusals?: () => AgentRefusals): void;
  close(): Promise<void>;
}

export async function startAgentHealth(port: number): Promise<AgentHealth> {
  let ready = false;
  let refusals: () => AgentRefusals = () => ({ refusedRequests: 0, ignoredPods: 0 });
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (path === "/metrics") {
      res.writeHead(200, { "content-type": "text/plain; version=0.0.4" }).end(metricsText(refusals()));
      return;
    }
    const ok = path === "/healthz" || (path === "/readyz" && ready);
    const known = path === "/healthz" || path === "/readyz";
    res.writeHead(ok ? 200 : known ? 503 : 404, { "content-type": "application/json" });
    res.end(JSON.stringify({ status: ok ? "ok" : known ? "starting" : "not found" }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, resolve);
  });
  return {
    ready: (counts) => {
      ready = true;
      if (counts) refusals = counts;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function metricsText(r: AgentRefusals): string {
  return [
    "# HELP fleetq_agent_refused_requests_total Bind requests refused: not signed with the cluster's key.",
    "# TYPE fleetq_agent_refused_requests_total counter",
    `fleetq_agent_refused_requests_total ${r.refusedRequests}`,
    "# HELP fleetq_agent_ignored_pods_total Pods naming a fleetq job that the agent did not create or bind.",
    "# TYPE fleetq_agent_ignored_pods_total counter",
    `fleetq_agent_ignored_pods_total ${r.ignoredPods}`,
    "",
  ].join("\n");
}
