// Reconciliation against the real API (real PostgreSQL, real Redis) and the fake Kubernetes
// API server: pods deleted while the agent was away are FAILED when it comes back (its first
// list is complete), their GPUs are free for the next cycle, and pods still there are kept.
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KubernetesBackend } from "../../src/agent/backends/kubernetes/kubernetes-backend.js";
import { type ApiAgent, startApiAgent } from "./api-agent.js";
import { CONTAINER_TEMPLATE } from "./bind-requests.js";
import { FakeKubeApiServer } from "./fake-kube-apiserver.js";
import { until } from "./until.js";

const log = pino({ level: process.env.AGENT_TEST_LOG ?? "silent" });

interface JobView {
  state: string;
  pods: { name: string; state: string; node: string | null; message: string | null }[];
}

describe("reconciliation after the agent was away", () => {
  let env: ApiAgent;
  let kube: FakeKubeApiServer;
  const backend = () =>
    new KubernetesBackend({
      cluster: "c1",
      kubeConfig: kube.kubeConfig(),
      defaultNamespace: "default",
      log,
      groupDebounceMs: 20,
      // Lists of two pods a page: the inventory of a few pods already takes several pages.
      listPageSize: 2,
    });

  const admin = <T>(query: string, variables: Record<string, unknown> = {}) => env.admin<T>(query, variables);

  async function submit(name: string, replicas: number, gpu: number, node: string): Promise<string> {
    const r = await admin<{ submitJob: { id: string } }>(
      "mutation($input: SubmitJobInput!) { submitJob(input: $input) { id } }",
      {
        input: {
          name,
          queue: "team-a",
          cluster: "c1",
          namespace: "default",
          tasks: [
            {
              name: "worker",
              replicas,
              resources: { cpu: 1000, memory: "1Gi", gpu },
              nodeSelector: [{ key: "kubernetes.io/hostname", values: [node] }],
              template: CONTAINER_TEMPLATE,
            },
          ],
        },
      },
    );
    return r.submitJob.id;
  }

  const job = async (id: string) =>
    (
      await admin<{ job: JobView }>(
        "query($id: ID!) { job(id: $id) { state pods { name state node message } } }",
        {
          id,
        },
      )
    ).job;

  beforeAll(async () => {
    kube = await FakeKubeApiServer.start();
    kube.addNode({ name: "n1", gpus: 8 });
    kube.addNode({ name: "n2", gpus: 8 });
    env = await startApiAgent({
      label: "fleetq-agent-reconcile",
      queue: "team-a",
      backend: backend(),
      logger: log,
    });
  });

  afterAll(async () => {
    await env?.close();
    await kube?.stop();
  });

  it("fails the pods deleted while the agent was stopped, frees their GPUs, and keeps the others", async () => {
    await until(async () => {
      const { cluster } = await admin<{ cluster: { nodes: unknown[] } }>(
        `{ cluster(name: "c1") { nodes { name } } }`,
      );
      expect(cluster.nodes).toHaveLength(2);
    });
    const gone = await submit("train", 2, 4, "n1");
    const kept = await submit("train", 1, 1, "n2");
    expect((await env.cycle()).bindRequests).toHaveLength(3);
    expect(await env.dispatch()).toBe(3);
    await until(async () => {
      expect((await job(gone)).state).toBe("RUNNING");
      expect((await job(kept)).state).toBe("RUNNING");
    });

    // The agent stops; meanwhile the pods on n1 are deleted (kubectl, a node drained, GC).
    await env.agent.stop();
    for (const pod of kube.store.list("pods", (p) => p.spec.nodeName === "n1"))
      kube.store.remove("pods", `default/${pod.metadata.name}`);
    await env.restart(backend());

    await until(async () => {
      const j = await job(gone);
      expect(j.pods.map((p) => [p.state, p.message])).toEqual([
        ["FAILED", "pod vanished from cluster c1"],
        ["FAILED", "pod vanished from cluster c1"],
      ]);
      expect(j.state).toBe("FAILED");
    });
    expect((await job(kept)).pods.map((p) => p.state)).toEqual(["RUNNING"]);

    // n1's eight GPUs are free for the next job at the next cycle.
    const next = await submit("next", 2, 4, "n1");
    const cycle = await env.cycle();
    expect(cycle.bindRequests).toHaveLength(2);
    await env.dispatch();
    await until(async () => expect((await job(next)).state).toBe("RUNNING"));
    expect((await job(kept)).state).toBe("RUNNING");
  });
});
