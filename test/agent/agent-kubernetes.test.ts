// The agent loop on the Kubernetes backend (fake API server over HTTP): pods users create
// for fleetq reach the API as pod groups, and an API without that mutation does not hold
// up the other reports.
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type RunningAgent, runAgent } from "../../src/agent/agent.js";
import { KubernetesBackend } from "../../src/agent/backends/kubernetes/kubernetes-backend.js";
import { clusterPodName } from "../../src/render/names.js";
import { TEST_REDIS_URL } from "../helpers/redis.js";
import { AGENT_TOKEN, AgentHarness, uuid } from "./agent-harness.js";
import { bindRequest } from "./bind-requests.js";
import { FakeKubeApiServer } from "./fake-kube-apiserver.js";
import { until } from "./until.js";

const log = pino({ level: "silent" });

describe("agent loop (Kubernetes backend)", () => {
  let harness: AgentHarness;
  let kube: FakeKubeApiServer;
  let agent: RunningAgent | null = null;

  beforeEach(async () => {
    harness = await AgentHarness.start("c1");
    kube = await FakeKubeApiServer.start();
    kube.addNode({ name: "n1", gpus: 8 });
  });

  afterEach(async () => {
    await agent?.stop();
    agent = null;
    await kube.stop();
    await harness.stop();
  });

  async function start(): Promise<void> {
    agent = await runAgent({
      cluster: "c1",
      apiUrl: harness.api.url,
      token: AGENT_TOKEN,
      redis: TEST_REDIS_URL,
      queuePrefix: harness.queuePrefix,
      backend: new KubernetesBackend({
        cluster: "c1",
        kubeConfig: kube.kubeConfig(),
        defaultNamespace: "default",
        log,
        groupDebounceMs: 20,
      }),
      batchWindowMs: 10,
      heartbeatSeconds: 3600,
      logger: log,
    });
  }

  function userPod(name: string) {
    return {
      metadata: {
        name,
        namespace: "ml",
        annotations: { "fleetq.io/pod-group": "sweep", "fleetq.io/queue": "research" },
      },
      spec: {
        schedulerName: "fleetq",
        containers: [{ name: "c", image: "x", resources: { requests: { cpu: "2" } } }],
      },
    };
  }

  it("reports pods users created for fleetq as a pod group", async () => {
    await start();
    kube.createPod(userPod("sweep-0"));
    kube.createPod(userPod("sweep-1"));
    await until(() =>
      expect(
        harness.api.callsOf("reportPodGroups").flatMap((c) => c.variables.groups as unknown[]),
      ).toContainEqual({
        namespace: "ml",
        name: "sweep",
        queue: "research",
        minMember: null,
        priority: null,
        pods: ["sweep-0", "sweep-1"].map((name) => ({
          name,
          uid: kube.pod("ml", name)!.metadata.uid,
          resources: { cpu: 2000, memory: "0", gpu: 0, gpuMemory: 0 },
          gpuModel: null,
          nodeSelector: [],
        })),
      }),
    );
  });

  it("keeps reporting pod states when the API has no reportPodGroups", async () => {
    harness.api.refuse.set("reportPodGroups", "GRAPHQL_VALIDATION_FAILED");
    await start();
    kube.createPod(userPod("sweep-0"));
    const jobId = uuid();
    const request = bindRequest({ id: uuid(), jobId, namespace: "ml", pod: "main-0", node: "n1" });
    await harness.send(request);
    await until(() =>
      expect(harness.api.podUpdates()).toEqual([
        { job: jobId, pod: "main-0", state: "RUNNING", bindRequest: request.id },
      ]),
    );
    kube.setPodPhase("ml", clusterPodName(request), "Succeeded");
    await until(() => expect(harness.api.podUpdates().map((u) => u.state)).toEqual(["RUNNING", "SUCCEEDED"]));
    expect(harness.api.bindResults()).toHaveLength(1);
  });
});
