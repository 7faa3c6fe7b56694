// The agent against the real API server (real PostgreSQL, real Redis): an admin registers the
// cluster and makes the agent's token, the agent reports its simulated nodes, a job is
// submitted and placed by one real scheduling cycle, the outbox is dispatched onto the bind
// queue as the workers will do it, and the agent's reports move the job to its end.
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseClusterFile } from "../../src/agent/backends/simulated/cluster-file.js";
import { SimulatedBackend } from "../../src/agent/backends/simulated/simulated-backend.js";
import { type ApiAgent, startApiAgent } from "./api-agent.js";
import { until } from "./until.js";

const CLUSTER = `
nodeGroups:
  - { name: gpu, count: 2, cpu: 32, memory: 256Gi, gpus: 4, gpuModel: H100, gpuMemoryMiB: 81920,
      topology: { zones: [z1], nodesPerRack: 2 } }
`;

describe("agent with the real API", () => {
  let env: ApiAgent;
  const clock = {
    t: Date.now(),
    now() {
      return this.t;
    },
  };
  const backend = SimulatedBackend.fromClusterFile(parseClusterFile("c1.yaml", CLUSTER), clock);

  const admin = <T>(query: string, variables: Record<string, unknown> = {}) => env.admin<T>(query, variables);
  const dispatch = () => env.dispatch();
  const cycle = () => env.cycle();

  /** A job of one task on c1, submitted by the admin. */
  async function submit(name: string, task: Record<string, unknown>): Promise<string> {
    const submitted = await admin<{ submitJob: { id: string } }>(
      `mutation($input: SubmitJobInput!) { submitJob(input: $input) { id } }`,
      { input: { name, queue: "team-a", cluster: "c1", tasks: [task] } },
    );
    return submitted.submitJob.id;
  }

  async function job(id: string) {
    return (
      await admin<{ job: { state: string; pods: { name: string; state: string; node: string | null }[] } }>(
        "query($id: ID!) { job(id: $id) { state pods { name state node } } }",
        { id },
      )
    ).job;
  }

  beforeAll(async () => {
    env = await startApiAgent({
      label: "fleetq-agent-api",
      queue: "team-a",
      backend: backend,
      logger: pino({ level: process.env.AGENT_TEST_LOG ?? "silent" }),
    });
  });

  afterAll(async () => {
    await env?.close();
  });

  it("reports the cluster's nodes", async () => {
    await until(async () => {
      const { cluster } = await admin<{ cluster: { state: string; nodes: { name: string }[] } }>(
        `{ cluster(name: "c1") { state nodes { name gpuModel capacity { gpu gpuMemory } labels { key value } } } }`,
      );
      expect(cluster.state).toBe("READY");
      expect(cluster.nodes).toHaveLength(2);
      expect(cluster.nodes[0]).toMatchObject({
        name: "gpu-0",
        gpuModel: "H100",
        capacity: { gpu: 4, gpuMemory: 4 * 81920 },
        labels: expect.arrayContaining([{ key: "topology.fleetq.io/rack", value: "gpu-z1-rack0" }]),
      });
    });
  });

  it("carries out the placements of a job, which runs and succeeds", async () => {
    const id = await submit("train", {
      name: "w",
      replicas: 2,
      resources: { cpu: 4000, memory: "32Gi", gpu: 4 },
      durationSeconds: 60,
    });
    expect((await cycle()).bindRequests).toHaveLength(2);
    expect(await dispatch()).toBe(2);

    await until(async () => expect((await job(id)).pods.map((p) => p.state)).toEqual(["RUNNING", "RUNNING"]));
    expect((await job(id)).state).toBe("RUNNING");
    expect(backend.cluster.runningPodCount).toBe(2);
    await until(async () => {
      const outbox = await admin<{ bindRequests: { state: string }[] }>(
        `{ bindRequests(cluster: "c1") { state } }`,
      );
      expect(outbox.bindRequests.map((b) => b.state)).toEqual(["SUCCEEDED", "SUCCEEDED"]);
    });

    clock.t += 61_000;
    backend.tick();
    await until(async () => expect((await job(id)).state).toBe("SUCCEEDED"));
    expect((await job(id)).pods.map((p) => p.state)).toEqual(["SUCCEEDED", "SUCCEEDED"]);
  });

  it("evicts the pods of a cancelled job", async () => {
    const id = await submit("long", {
      name: "w",
      replicas: 1,
      resources: { cpu: 1000, memory: "1Gi", gpu: 1 },
      durationSeconds: 86_400,
    });
    await cycle();
    await dispatch();
    await until(async () => expect((await job(id)).state).toBe("RUNNING"));

    await admin(`mutation($id: ID!) { cancelJob(id: $id) { state } }`, { id });
    expect(await dispatch()).toBe(1);
    await until(async () => expect((await job(id)).pods.map((p) => p.state)).toEqual(["FAILED"]));
    expect((await job(id)).state).toBe("CANCELLED");
    expect(backend.cluster.runningPodCount).toBe(0);
  });
});
