// The agent's probe endpoints (FLEETQ_AGENT_HEALTH_PORT): alive at once, ready once running.
import { expect, it } from "vitest";
import { startAgentHealth } from "../../src/cli/servers/agent-health.js";
import { freePort } from "../helpers/topology/services.js";

it("answers /healthz at once and /readyz once the agent runs", async () => {
  const port = await freePort();
  const health = await startAgentHealth(port);
  const status = async (path: string) => (await fetch(`http://127.0.0.1:${port}${path}`)).status;
  try {
    expect(await status("/healthz")).toBe(200);
    expect(await status("/readyz")).toBe(503);
    health.ready();
    expect(await status("/readyz")).toBe(200);
    expect(await status("/other")).toBe(404);
  } finally {
    await health.close();
  }
});

it("counts on /metrics the bind requests and pods the agent refused", async () => {
  const port = await freePort();
  const health = await startAgentHealth(port);
  const counts = { refusedRequests: 0, ignoredPods: 0 };
  const metrics = async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  try {
    expect(await metrics()).toContain("fleetq_agent_refused_requests_total 0");
    health.ready(() => counts);
    counts.refusedRequests = 3;
    counts.ignoredPods = 2;
    const text = await metrics();
    expect(text).toContain("# TYPE fleetq_agent_refused_requests_total counter");
    expect(text).toContain("fleetq_agent_refused_requests_total 3");
    expect(text).toContain("fleetq_agent_ignored_pods_total 2");
  } finally {
    await health.close();
  }
});
