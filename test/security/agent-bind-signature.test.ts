// Whoever can write to Redis cannot make an agent act: a bind request the control plane did not
// sign with this cluster's key — forged, signed for another cluster, or a signed one altered
// (namespace, node, resources) — is refused and counted, and nothing is created in the cluster.
// The real agent on the Kubernetes backend against the in-test API server, its bind queue on the
// real Redis.
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type RunningAgent, runAgent } from "../../src/agent/agent.js";
import { KubernetesBackend } from "../../src/agent/backends/kubernetes/kubernetes-backend.js";
import { bindRequestKey, signBindRequest } from "../../src/protocol/bind-request.js";
import { clusterPodName } from "../../src/render/names.js";
import { AGENT_TOKEN, AgentHarness, uuid } from "../agent/agent-harness.js";
import { bindRequest, signed } from "../agent/bind-requests.js";
import { FakeKubeApiServer } from "../agent/fake-kube-apiserver.js";
import { until } from "../agent/until.js";
import { TEST_REDIS_URL } from "../helpers/redis.js";
import { gql, registerClusterWithAgent, startTestApi } from "../helpers/api.js";

const log = pino({ level: "silent" });

describe("bind requests are authenticated", () => {
  let harness: AgentHarness;
  let kube: FakeKubeApiServer;
  let agent: RunningAgent;

  beforeEach(async () => {
    harness = await AgentHarness.start("c1");
    kube = await FakeKubeApiServer.start();
    kube.addNode({ name: "n1", gpus: 8 });
    const backend = new KubernetesBackend({
      cluster: "c1",
      kubeConfig: kube.kubeConfig(),
      defaultNamespace: "default",
      log,
    });
    agent = await runAgent({
      cluster: "c1",
      apiUrl: harness.api.url,
      token: AGENT_TOKEN,
      redis: TEST_REDIS_URL,
      queuePrefix: harness.queuePrefix,
      backend,
      batchWindowMs: 10,
      heartbeatSeconds: 3600,
      logger: log,
    });
  });

  afterEach(async () => {
    await agent.stop();
    await harness.stop();
    await kube.stop();
  });

  /** Puts job data on the queue as an attacker with Redis access would. */
  const put = (data: object, id: string) => harness.queue.add("bind", data, { jobId: id });
  const podsCreated = () => kube.count("POST", /\/pods$/);

  it("refuses unsigned, foreign-signed and altered requests; carries out the genuine one", async () => {
    const forged = bindRequest({
      id: uuid(),
      jobId: uuid(),
      pod: "main-0",
      node: "n1",
      namespace: "kube-system",
      gpus: 8,
    });
    await put(forged, forged.id);
    const otherCluster = bindRequest({ id: uuid(), jobId: uuid(), pod: "main-0", node: "n1" });
    await put(
      signBindRequest(otherCluster, bindRequestKey("another-control-plane's-secret", "c1")),
      otherCluster.id,
    );
    const genuine = bindRequest({ id: uuid(), jobId: uuid(), pod: "main-0", node: "n1" });
    const altered = {
      ...signed(genuine),
      job: { ...genuine.job, namespace: "kube-system" },
    };
    await put({ ...altered, id: uuid() }, "altered-namespace");
    const moreGpus = signed(genuine);
    moreGpus.pod = { ...moreGpus.pod, resources: { ...moreGpus.pod.resources, gpus: 8 } };
    await put(moreGpus, "altered-resources");

    await until(async () => expect((await harness.counts()).failed).toBe(4));
    expect(agent.refusedRequests).toBe(4);
    expect(podsCreated()).toBe(0);
    expect(kube.pod("kube-system", clusterPodName(forged))).toBeUndefined();
    expect(harness.api.bindResults()).toEqual([]);

    await harness.send(genuine);
    await until(() => expect(harness.api.bindResults()).toHaveLength(1));
    expect(harness.api.bindResults()[0]).toMatchObject({ bindRequest: genuine.id, ok: true });
    expect(kube.pod("team-a", clusterPodName(genuine))).toBeDefined();
    expect(agent.refusedRequests).toBe(4);
  });
});

describe("agentBindKey", () => {
  it("gives a cluster's key to that cluster's AGENT only", async () => {
    const api = await startTestApi({ bindSecret: "a-control-plane-secret-for-this-test" });
    try {
      const c1 = await registerClusterWithAgent(api, "c1");
      const c2 = await registerClusterWithAgent(api, "c2");
      const ask = (token: string, cluster: string) =>
        gql<{ agentBindKey: string }>(api.url, token, "query($c: String!) { agentBindKey(cluster: $c) }", {
          c: cluster,
        });
      const own = await ask(c1, "c1");
      expect(own.data?.agentBindKey).toBe(bindRequestKey("a-control-plane-secret-for-this-test", "c1"));
      for (const [token, who] of [
        [c2, "another cluster's agent"],
        [api.adminToken, "an ADMIN"],
      ] as const) {
        const refused = await ask(token, "c1");
        expect(refused.errors?.[0]?.extensions?.code, who).toBe("FORBIDDEN");
        expect(refused.data?.agentBindKey, who).toBeUndefined();
      }
    } finally {
      await api.close();
    }
  });
});
