// The agent loop end to end on a simulated cluster: real BullMQ on the real Redis (own
// prefix), GraphQL over HTTP to an in-test endpoint that records the agent mutations.
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AgentAuthError, type AgentOptions, type RunningAgent, runAgent } from "../../src/agent/agent.js";
import { parseClusterFile } from "../../src/agent/backends/simulated/cluster-file.js";
import { SimulatedBackend } from "../../src/agent/backends/simulated/simulated-backend.js";
import { TEST_REDIS_URL } from "../helpers/redis.js";
import { AGENT_TOKEN, AgentHarness, uuid } from "./agent-harness.js";
import { bindRequest } from "./bind-requests.js";
import { GraphQLRecorder } from "./graphql-recorder.js";
import { TcpProxy } from "./tcp-proxy.js";
import { until } from "./until.js";

const log = pino({ level: "silent" });

const CLUSTER_YAML = `
labels: { region: test }
nodeGroups:
  - { name: gpu, count: 2, cpu: 32, memory: 256Gi, gpus: 8, gpuModel: A100, gpuMemoryMiB: 40960 }
`;

describe("agent loop (simulated backend)", () => {
  let harness: AgentHarness;
  let clock: { t: number; now(): number };
  let backend: SimulatedBackend;
  const agents: RunningAgent[] = [];

  beforeEach(async () => {
    harness = await AgentHarness.start("c1");
    clock = {
      t: 1_000_000,
      now() {
        return this.t;
      },
    };
    backend = SimulatedBackend.fromClusterFile(parseClusterFile("test.yaml", CLUSTER_YAML), clock);
  });

  afterEach(async () => {
    for (const agent of agents.splice(0)) await agent.stop();
    await harness.stop();
  });

  async function start(overrides: Partial<AgentOptions> = {}): Promise<RunningAgent> {
    const agent = await runAgent({
      cluster: "c1",
      apiUrl: harness.api.url,
      token: AGENT_TOKEN,
      redis: TEST_REDIS_URL,
      queuePrefix: harness.queuePrefix,
      backend,
      batchWindowMs: 10,
      heartbeatSeconds: 3600,
      logger: log,
      ...overrides,
    });
    agents.push(agent);
    return agent;
  }

  it("registers, reports the complete inventory, binds, and reports results and pod phases", async () => {
    await start();
    expect(harness.api.callsOf("me")).toHaveLength(1);
    expect(harness.api.callsOf("registerCluster")[0]?.variables).toEqual({
      input: { name: "c1", labels: [{ key: "region", value: "test" }] },
    });
    await until(() => expect(harness.api.callsOf("reportNodes")).toHaveLength(1));
    const inventory = harness.api.callsOf("reportNodes")[0]!.variables;
    expect(inventory.complete).toBe(true);
    expect(inventory.nodes).toHaveLength(2);
    expect((inventory.nodes as { capacity: unknown }[])[0]!.capacity).toEqual({
      cpu: 32_000,
      memory: String(256 * 2 ** 30),
      gpu: 8,
      gpuMemory: 8 * 40960,
    });

    const jobId = uuid();
    const ok = bindRequest({ id: uuid(), jobId, pod: "p0", node: "gpu-0", gpus: 8, durationSeconds: 60 });
    const fails = bindRequest({ id: uuid(), jobId, pod: "p1", node: "gpu-1", gpus: 2, exitFailure: true });
    const noNode = bindRequest({ id: uuid(), jobId, pod: "p2", node: "gpu-7" });
    await harness.send(ok, fails, noNode);
    await until(() => expect(harness.api.bindResults()).toHaveLength(3));
    const results = Object.fromEntries(harness.api.bindResults().map((r) => [r.bindRequest, r]));
    expect(results[ok.id]).toEqual({ bindRequest: ok.id, ok: true, message: "running on gpu-0" });
    expect(results[fails.id]?.ok).toBe(true);
    expect(results[noNode.id]).toEqual({
      bindRequest: noNode.id,
      ok: false,
      message: "node gpu-7 does not exist",
    });
    await until(async () => expect((await harness.counts()).completed).toBe(3));

    // Time passes on the simulated clock: both pods end.
    clock.t += 120_000;
    backend.tick();
    await until(() =>
      expect(harness.api.podUpdates()).toEqual(
        expect.arrayContaining([
          { job: jobId, pod: "p0", state: "RUNNING" },
          { job: jobId, pod: "p1", state: "RUNNING" },
          { job: jobId, pod: "p0", state: "SUCCEEDED", exitCode: 0, bindRequest: ok.id },
          expect.objectContaining({ job: jobId, pod: "p1", state: "FAILED", exitCode: 1 }),
        ]),
      ),
    );
    expect(harness.api.podUpdates()).toHaveLength(4);
    expect(backend.cluster.nodeUsage("gpu-0")?.gpus).toBe(8);
  });

  it("answers a request delivered again from its recorded outcome, without executing it twice", async () => {
    await start();
    const jobId = uuid();
    const bind = bindRequest({ id: uuid(), jobId, pod: "p0", node: "gpu-0", gpus: 4 });
    const evict = bindRequest({
      id: uuid(),
      kind: "evict",
      jobId,
      pod: "p0",
      node: "gpu-0",
      reason: "preempted",
    });
    await harness.send(bind);
    await until(async () => expect((await harness.counts()).completed).toBe(1));
    await harness.send(evict);
    await until(async () => expect((await harness.counts()).completed).toBe(2));
    expect(backend.cluster.runningPodCount).toBe(0);

    // The dispatcher re-sends the (long finished) bind: the pod must not come back.
    await harness.queue.clean(0, 100, "completed");
    await harness.send(bind);
    await until(async () => expect((await harness.counts()).completed).toBe(1));
    expect(backend.cluster.runningPodCount).toBe(0);
    // A late eviction of a pod already gone is answered ok as well.
    const lateEvict = { ...evict, id: uuid() };
    await harness.send(lateEvict);
    await until(() => expect(harness.api.bindResults().map((r) => r.bindRequest)).toContain(lateEvict.id));
    expect(harness.api.bindResults().find((r) => r.bindRequest === lateEvict.id)).toEqual({
      bindRequest: lateEvict.id,
      ok: true,
      message: "pod is not running on gpu-0 (already gone)",
    });
    expect(harness.api.podUpdates().map((u) => u.state)).toEqual(["RUNNING", "PENDING"]);
  });

  it("keeps results through an API outage and delivers each exactly once when it returns", async () => {
    await start();
    await until(() => expect(harness.api.callsOf("reportNodes")).toHaveLength(1));
    harness.api.down = true;
    const requests = Array.from({ length: 5 }, (_, i) =>
      bindRequest({ id: uuid(), jobId: uuid(), pod: `p${i}`, node: `gpu-${i % 2}`, gpus: 1 }),
    );
    await harness.send(...requests);
    // Executed, but not acknowledged: the jobs stay claimed until the API has the results.
    await until(() => expect(backend.cluster.runningPodCount).toBe(5));
    await until(async () => expect((await harness.counts()).active).toBe(5));
    expect(harness.api.bindResults()).toHaveLength(0);

    harness.api.down = false;
    await until(async () => expect((await harness.counts()).completed).toBe(5));
    const delivered = harness.api.bindResults().map((r) => r.bindRequest);
    expect(delivered.sort()).toEqual(requests.map((r) => r.id).sort());
    expect(harness.api.podUpdates().filter((u) => u.state === "RUNNING")).toHaveLength(5);
  });

  it("picks up requests queued while its Redis connection was down", async () => {
    const proxy = await TcpProxy.start("127.0.0.1", 6379);
    try {
      await start({ redis: `redis://127.0.0.1:${proxy.port}` });
      await proxy.cut();
      const requests = Array.from({ length: 3 }, (_, i) =>
        bindRequest({ id: uuid(), jobId: uuid(), pod: `p${i}`, node: "gpu-0", gpus: 1 }),
      );
      await harness.send(...requests); // straight to Redis: only the agent is cut off
      expect(backend.cluster.runningPodCount).toBe(0);
      await proxy.restore();
      await until(async () => expect((await harness.counts()).completed).toBe(3));
      expect(
        harness.api
          .bindResults()
          .map((r) => r.bindRequest)
          .sort(),
      ).toEqual(requests.map((r) => r.id).sort());
      expect(backend.cluster.runningPodCount).toBe(3);
    } finally {
      for (const agent of agents.splice(0)) await agent.stop();
      await proxy.stop();
    }
  });

  it("fails a malformed message without executing anything", async () => {
    await start();
    await harness.queue.add("bind", { id: "x", kind: "teleport" }, { jobId: "x" });
    await until(async () => expect((await harness.counts()).failed).toBe(1));
    expect(harness.api.bindResults()).toHaveLength(0);
  });

  it("sends an empty node report as a heartbeat when it has nothing else to say", async () => {
    await start({ heartbeatSeconds: 0.05 });
    await until(() => expect(harness.api.callsOf("reportNodes").length).toBeGreaterThanOrEqual(3));
    const heartbeats = harness.api.callsOf("reportNodes").slice(1);
    for (const call of heartbeats)
      expect(call.variables).toEqual({ cluster: "c1", nodes: [], complete: false });
  });

  it("sends its heartbeat however busy its other reports keep it", async () => {
    // The control plane times a cluster's silence by its node reports: an agent whose bind
    // results and pod phases never stop must still send them, or its cluster goes LOST.
    await start({ heartbeatSeconds: 0.5 });
    await until(() => expect(harness.api.callsOf("reportNodes")).toHaveLength(1));
    const heartbeats = () => harness.api.callsOf("reportNodes").slice(1);
    const jobId = uuid();
    for (let i = 0; i < 500 && heartbeats().length < 2; i++) {
      await harness.send(
        bindRequest({ id: uuid(), jobId, pod: `p${i}`, node: `gpu-${i % 2}`, cpuMillis: 1, memory: 1 }),
      );
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(heartbeats().length).toBeGreaterThanOrEqual(2);
    for (const call of heartbeats())
      expect(call.variables).toEqual({ cluster: "c1", nodes: [], complete: false });
    // It was busy all along: results kept coming while the heartbeats went out.
    expect(harness.api.bindResults().length).toBeGreaterThan(10);
  });

  it("tolerates a refused registerCluster and refuses a token that is not this cluster's agent", async () => {
    harness.api.refuse.set("registerCluster", "FORBIDDEN");
    await start();
    expect(harness.api.callsOf("registerCluster")).toHaveLength(0);

    const member = await GraphQLRecorder.start("member-token", "c1", "MEMBER");
    try {
      await expect(
        runAgent({
          cluster: "c1",
          apiUrl: member.url,
          token: "member-token",
          redis: TEST_REDIS_URL,
          queuePrefix: harness.queuePrefix,
          backend,
          logger: log,
        }),
      ).rejects.toThrow(AgentAuthError);
      await expect(
        runAgent({
          cluster: "c1",
          apiUrl: member.url,
          token: "wrong",
          redis: TEST_REDIS_URL,
          backend,
          logger: log,
        }),
      ).rejects.toThrow("refused the agent's token");
    } finally {
      await member.stop();
    }
  });
});
