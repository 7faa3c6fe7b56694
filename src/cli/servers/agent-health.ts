// The agent's probe endpoints when FLEETQ_AGENT_HEALTH_PORT is set (a Deployment's liveness and
// readiness probes): /healthz answers while the process runs; /readyz once the agent has
// proved its token, registered and delivered its cluster's first complete inventory.
import { createServer, type Server } from "node:http";

export interface AgentHealth {
  ready(): void;
  close(): Promise<void>;
}

export async function startAgentHealth(port: number): Promise<AgentHealth> {
  let ready = false;
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
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
    ready: () => {
      ready = true;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
