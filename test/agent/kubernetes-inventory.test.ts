// The Kubernetes backend's node inventory against the fake API server over real HTTP:
// conversion, watched changes, resume after a dropped watch, relist after 410 Gone.
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { KubernetesBackend } from "../../src/agent/backends/kubernetes/kubernetes-backend.js";
import { RecordedEvents } from "./backend-events.js";
import { FakeKubeApiServer } from "./fake-kube-apiserver.js";
import { until } from "./until.js";

const log = pino({ level: "silent" });

describe("Kubernetes backend: node inventory", () => {
  let kube: FakeKubeApiServer;
  let backend: KubernetesBackend;
  let events: RecordedEvents;

  beforeEach(async () => {
    kube = await FakeKubeApiServer.start();
    kube.addNode({
      name: "gpu-1",
      cpu: "95500m",
      memory: "1056731164Ki",
      gpus: 8,
      labels: {
        "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
        "nvidia.com/gpu.memory": "81559",
        "topology.kubernetes.io/zone": "eu-1a",
        "topology.fleetq.io/rack": "r7",
      },
      taints: [{ key: "nvidia.com/gpu", value: "present", effect: "NoSchedule" }],
    });
    kube.addNode({ name: "cpu-1", cpu: "16", memory: "64Gi", unschedulable: true });
    kube.addNode({ name: "cpu-2", cpu: "16", memory: "64Gi", ready: false });
    backend = new KubernetesBackend({
      cluster: "c1",
      kubeConfig: kube.kubeConfig(),
      defaultNamespace: "default",
      log,
    });
    events = new RecordedEvents();
  });

  afterEach(async () => {
    await backend.stop();
    await kube.stop();
  });

  it("reports every node at start, as the API expects them", async () => {
    await backend.start(events);
    const [first] = events.nodeCalls;
    expect(first?.complete).toBe(true);
    const byName = Object.fromEntries(first!.nodes.map((n) => [n.name, n]));
    expect(byName["gpu-1"]).toEqual({
      name: "gpu-1",
      capacity: { cpuMillis: 95_500, memory: 1056731164 * 1024, gpus: 8, gpuMemory: 81559 },
      labels: {
        "kubernetes.io/hostname": "gpu-1",
        "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
        "nvidia.com/gpu.memory": "81559",
        "topology.kubernetes.io/zone": "eu-1a",
        "topology.fleetq.io/rack": "r7",
      },
      gpuModel: "NVIDIA-H100-80GB-HBM3",
      unschedulable: false,
      ready: true,
      maxPods: 110,
      taints: ["nvidia.com/gpu=present:NoSchedule"],
    });
    expect(byName["cpu-1"]).toMatchObject({
      unschedulable: true,
      gpuModel: null,
      capacity: { gpus: 0, gpuMemory: 0 },
    });
    expect(byName["cpu-2"]).toMatchObject({ unschedulable: false, ready: false });
  });

  it("reads the GPU devices' topology from the fleetq.io/gpu-topology annotation, and ignores a wrong one", async () => {
    const topology = [0, 1, 2, 3].map((index) => ({ index, nvlinkDomain: `nvl${index >> 1}`, numaNode: 0 }));
    kube.addNode({
      name: "topo",
      gpus: 4,
      annotations: { "fleetq.io/gpu-topology": JSON.stringify(topology) },
    });
    kube.addNode({
      name: "miscounted",
      gpus: 4,
      annotations: { "fleetq.io/gpu-topology": JSON.stringify(topology.slice(0, 3)) },
    });
    kube.addNode({ name: "garbled", gpus: 2, annotations: { "fleetq.io/gpu-topology": "0:a,1:a" } });
    kube.addNode({
      name: "twice",
      gpus: 2,
      annotations: { "fleetq.io/gpu-topology": JSON.stringify([{ index: 0 }, { index: 0 }]) },
    });
    await backend.start(events);
    const byName = Object.fromEntries(events.completeReports[0]!.nodes.map((n) => [n.name, n]));
    expect(byName.topo!.gpuDevices).toEqual(topology);
    // Unknown topology: no device list at all (the node's device plugin chooses).
    for (const name of ["miscounted", "garbled", "twice", "gpu-1"])
      expect(byName[name]!.gpuDevices, name).toBeUndefined();
  });

  it("watches node changes instead of polling, and resumes a dropped watch without relisting", async () => {
    await backend.start(events);
    kube.addNode({ name: "gpu-2", gpus: 4, labels: { "nvidia.com/gpu.product": "NVIDIA-L4" } });
    await until(() =>
      expect(events.nodeCalls.some((c) => c.nodes.some((n) => n.name === "gpu-2"))).toBe(true),
    );
    const added = events.nodeCalls.at(-1)!;
    expect(added.complete).toBe(false);
    expect(added.nodes[0]).toMatchObject({ name: "gpu-2", gpuModel: "NVIDIA-L4", capacity: { gpus: 4 } });

    kube.dropWatches();
    kube.updateNode("gpu-1", (node) => {
      node.spec.unschedulable = true;
    });
    await until(() =>
      expect(
        events.nodeCalls.some(
          (c) => !c.complete && c.nodes.some((n) => n.name === "gpu-1" && n.unschedulable),
        ),
      ).toBe(true),
    );
    kube.deleteNode("cpu-1");
    await until(() => expect(events.nodeCalls.some((c) => c.deleted.includes("cpu-1"))).toBe(true));

    expect(backend.lists.nodes).toBe(1);
    expect(kube.count("GET", /^\/api\/v1\/nodes$/)).toBeGreaterThanOrEqual(3); // list + watch + resumed watch
    // Resumed from the last version seen: no change was delivered twice.
    const gpu2Reports = events.nodeCalls.filter(
      (c) => !c.complete && c.nodes.some((n) => n.name === "gpu-2"),
    );
    expect(gpu2Reports).toHaveLength(1);
  });

  it.each([
    "event",
    "http",
  ] as const)("lists again with a complete report when the watch's version is gone (410 as %s)", async (goneAs) => {
    kube.goneAs = goneAs;
    await backend.start(events);
    kube.dropWatches();
    // While the agent is disconnected a node comes and one goes, and history is compacted.
    kube.addNode({ name: "late", cpu: "4" });
    kube.deleteNode("cpu-2");
    kube.store.compact();
    await until(() => expect(events.completeReports).toHaveLength(2));
    expect(backend.lists.nodes).toBe(2);
    const names = events.completeReports[1]!.nodes.map((n) => n.name).sort();
    expect(names).toEqual(["cpu-1", "gpu-1", "late"]);
  });

  it("retries a node list that fails with 500 or 429", async () => {
    kube.injectFault({ method: "GET", path: /^\/api\/v1\/nodes$/, status: 500, times: 1 });
    kube.injectFault({
      method: "GET",
      path: /^\/api\/v1\/nodes$/,
      status: 429,
      times: 1,
      retryAfterSeconds: 0,
    });
    await backend.start(events);
    expect(events.completeReports).toHaveLength(1);
    expect(events.completeReports[0]!.nodes).toHaveLength(3);
    expect(kube.count("GET", /^\/api\/v1\/nodes$/, 500)).toBe(1);
    expect(kube.count("GET", /^\/api\/v1\/nodes$/, 429)).toBe(1);
  });
});
