// The simulated backend must hold 5,000 nodes and 100,000 pods in one process. Counts and
// state only: no timing assertions (the machine is shared).
import { describe, expect, it } from "vitest";
import { expandNodes, parseClusterFile } from "../../src/agent/backends/simulated/cluster-file.js";
import { SimulatedCluster } from "../../src/agent/backends/simulated/simulated-cluster.js";
import { bindRequest } from "./bind-requests.js";

describe("simulated cluster at scale", () => {
  it("holds 5,000 nodes and 100,000 running pods, then finishes them all", () => {
    const file = parseClusterFile(
      "scale.yaml",
      `
nodeGroups:
  - { name: gpu, count: 4000, cpu: 128, memory: 1Ti, gpus: 8, gpuModel: H100,
      topology: { zones: [a, b, c, d], nodesPerRack: 16, nodesPerNVSwitchDomain: 8 } }
  - { name: cpu, count: 1000, cpu: 64, memory: 256Gi }
`,
    );
    const nodes = expandNodes(file);
    expect(nodes).toHaveLength(5_000);
    const cluster = new SimulatedCluster(nodes, 60);

    let ok = 0;
    for (let i = 0; i < 100_000; i++) {
      const node = nodes[i % 5_000]!.name;
      const request = bindRequest({
        id: `r${i}`,
        jobId: `job-${i >> 4}`,
        pod: `pod-${i}`,
        node,
        cpuMillis: 1000,
        memory: 2 ** 30,
        // 8 pods of each GPU node take one device each: exactly what it has.
        gpus: node.startsWith("gpu") && i < 40_000 ? 1 : 0,
        durationSeconds: 1 + (i % 500),
        exitFailure: i % 10 === 0,
      });
      if (cluster.bind(request, 0).outcome.ok) ok++;
    }
    expect(ok).toBe(100_000);
    expect(cluster.runningPodCount).toBe(100_000);
    expect(cluster.nodeUsage("gpu-0000")).toMatchObject({ gpus: 0, pods: 20, cpuMillis: 128_000 - 20_000 });
    expect(cluster.nodeUsage("cpu-999")).toMatchObject({ gpus: 0, pods: 20, cpuMillis: 64_000 - 20_000 });

    const firstHalf = cluster.advance(250_000);
    expect(firstHalf.length).toBe(50_000);
    expect(cluster.runningPodCount).toBe(50_000);
    const rest = cluster.advance(500_000);
    expect(rest.length).toBe(50_000);
    const all = [...firstHalf, ...rest];
    expect(all.filter((c) => c.state === "FAILED")).toHaveLength(10_000);
    expect(all.filter((c) => c.state === "SUCCEEDED")).toHaveLength(90_000);
    expect(cluster.runningPodCount).toBe(0);
    expect(cluster.nextDeadline()).toBeNull();
    for (const node of [nodes[0]!, nodes[4_999]!]) {
      expect(cluster.nodeUsage(node.name)).toEqual({
        cpuMillis: node.capacity.cpuMillis,
        memory: node.capacity.memory,
        gpus: node.capacity.gpus,
        pods: 0,
      });
    }
  });
});
