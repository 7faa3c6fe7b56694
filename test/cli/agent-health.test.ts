// The agent's probe endpoints (FLEETQ_AGENT_HEALTH_PORT): alive at once, ready once running.
import { createServer } from "node:net";
import { expect, it } from "vitest";
import { startAgentHealth } from "../../src/cli/servers/agent-health.js";

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

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
