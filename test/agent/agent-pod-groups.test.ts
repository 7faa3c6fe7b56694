// Pods users create in a Kubernetes cluster for fleetq, end to end: the agent (Kubernetes
// backend on the fake API server) reports them as a pod group to the real API server (real
// PostgreSQL, real Redis), the group becomes a job, a real scheduling cycle places it, the outbox
// goes onto the bind queue, and the agent binds the EXISTING pods (BindRequests without template),
// pinned to the GPU devices the cycle chose on a node that reports its device topology.
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KubernetesBackend } from "../../src/agent/backends/kubernetes/kubernetes-backend.js";
import { FakeKubeApiServer } from "./fake-kube-apiserver.js";
import { type ApiAgent, startApiAgent } from "./api-agent.js";
import { until } from "./until.js";

const log = pino({ level: process.env.AGENT_TEST_LOG ?? "silent" });

interface JobView {
  id: string;
  state: string;
  minMember: number;
  createdInCluster: boolean;
  queue: { name: string };
  pods: { name: string; state: string; node: string | null }[];
}

describe("pod groups created in a Kubernetes cluster", () => {
  let env: ApiAgent;
  let kube: FakeKubeApiServer;

  const admin = <T>(query: string, variables: Record<string, unknown> = {}) => env.admin<T>(query, variables);
  const dispatch = () => env.dispatch();
  const cycle = () => env.cycle();

  async function groupJobs(): Promise<JobView[]> {
    const r = await admin<{ jobs: { edges: { node: JobView }[] } }>(
      `{ jobs(filter: { cluster: "c1" }, first: 15) { edges { node { id state minMember createdInCluster queue { name } pods { name state node } } } } }`,
    );
    return r.jobs.edges.map((e) => e.node);
  }

  /** A pod as a user would create it with kubectl: our scheduler name, the group's annotations. */
  function userPod(name: string) {
    return {
      metadata: {
        name,
        namespace: "ml",
        annotations: {
          "fleetq.io/pod-group": "sweep",
          "fleetq.io/queue": "research",
          "fleetq.io/min-member": "2",
        },
      },
      spec: {
        schedulerName: "fleetq",
        containers: [
          {
            name: "main",
            image: "trainer:1",
            resources: { requests: { cpu: "2", memory: "4Gi" }, limits: { "nvidia.com/gpu": "2" } },
          },
        ],
      },
    };
  }

  beforeAll(async () => {
    kube = await FakeKubeApiServer.start();
    const topology = Array.from({ length: 8 }, (_, index) => ({ index, nvlinkDomain: `nvl${index >> 2}` }));
    kube.addNode({
      name: "n1",
      cpu: "32",
      memory: "256Gi",
      gpus: 8,
      annotations: { "fleetq.io/gpu-topology": JSON.stringify(topology) },
    });
    env = await startApiAgent({
      label: "fleetq-agent-groups",
      queue: "research",
      backend: new KubernetesBackend({
        cluster: "c1",
        kubeConfig: kube.kubeConfig(),
        defaultNamespace: "default",
        log,
        groupDebounceMs: 20,
      }),
      logger: log,
    });
    // The groups' namespace charges the queue only where the queue maps it.
    await env.admin(
      `mutation { updateQueue(name: "research", input: { namespaces: ["default", "ml"] }) { name } }`,
    );
  });

  afterAll(async () => {
    await env?.close();
    await kube?.stop();
  });

  it("become a job, placed by a real cycle, whose existing pods the agent binds", async () => {
    await until(async () => {
      const { cluster } = await admin<{ cluster: { nodes: { name: string; gpuDevices: unknown[] }[] } }>(
        `{ cluster(name: "c1") { nodes { name gpuDevices { index nvlinkDomain numaNode } } } }`,
      );
      expect(cluster.nodes.map((n) => n.name)).toEqual(["n1"]);
      expect(cluster.nodes[0]!.gpuDevices).toHaveLength(8);
    });
    kube.createPod(userPod("sweep-0"));
    kube.createPod(userPod("sweep-1"));

    const job = await until(async () => {
      const [only, ...rest] = await groupJobs();
      expect(rest).toEqual([]);
      expect(only).toMatchObject({
        state: "PENDING",
        minMember: 2,
        createdInCluster: true,
        queue: { name: "research" },
        pods: [
          { name: "sweep-0", state: "PENDING", node: null },
          { name: "sweep-1", state: "PENDING", node: null },
        ],
      });
      return only!;
    });

    expect((await cycle()).bindRequests).toHaveLength(2);
    expect(await dispatch()).toBe(2);

    await until(async () => {
      const [now] = await groupJobs();
      expect(now!.state).toBe("RUNNING");
      expect(now!.pods.map((p) => [p.name, p.state, p.node])).toEqual([
        ["sweep-0", "RUNNING", "n1"],
        ["sweep-1", "RUNNING", "n1"],
      ]);
    });
    // The user's pods were bound where they are, never created again by the agent.
    expect(kube.effects.filter((e) => e.startsWith("create"))).toEqual([]);
    expect(kube.effects.filter((e) => e.startsWith("bind")).sort()).toEqual([
      "bind ml/sweep-0 n1",
      "bind ml/sweep-1 n1",
    ]);
    const pinned: string[] = [];
    for (const name of ["sweep-0", "sweep-1"]) {
      const pod = kube.pod("ml", name)!;
      expect(pod.spec.nodeName).toBe("n1");
      expect(pod.spec.containers[0].image).toBe("trainer:1");
      expect(pod.metadata.annotations["fleetq.io/job-id"]).toBe(job.id);
      pinned.push(...pod.metadata.annotations["fleetq.io/gpu-devices"].split(","));
    }
    // Two devices each, none shared, as the control plane recorded them.
    expect(new Set(pinned).size).toBe(4);
    const { job: stored } = await admin<{ job: { pods: { gpuDevices: number[] }[] } }>(
      "query($id: ID!) { job(id: $id) { pods { gpuDevices } } }",
      { id: job.id },
    );
    expect(stored.pods.flatMap((p) => p.gpuDevices).map(String)).toEqual(pinned);
    await until(async () => {
      const outbox = await admin<{ bindRequests: { state: string }[] }>(
        `{ bindRequests(cluster: "c1") { state } }`,
      );
      expect(outbox.bindRequests.map((b) => b.state)).toEqual(["SUCCEEDED", "SUCCEEDED"]);
    });
  });

  it("end their job when the user deletes them", async () => {
    kube.store.remove("pods", "ml/sweep-0");
    kube.store.remove("pods", "ml/sweep-1");
    await until(async () => {
      const [job] = await groupJobs();
      expect(job!.state).toBe("CANCELLED");
    });
  });
});
