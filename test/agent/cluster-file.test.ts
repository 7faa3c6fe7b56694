import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  expandNodes,
  loadClusterFile,
  parseClusterFile,
} from "../../src/agent/backends/simulated/cluster-file.js";
import { ConfigFileError } from "../../src/agent/yaml-file.js";

const EXAMPLES = join(import.meta.dirname, "../../examples/clusters");

describe("simulated cluster files", () => {
  it("expands node groups into nodes with GPU and topology labels", () => {
    const file = parseClusterFile(
      "racks.yaml",
      `
nodeGroups:
  - name: h100
    count: 8
    cpu: "96"
    memory: 1Ti
    gpus: 8
    gpuModel: NVIDIA-H100
    gpuMemoryMiB: 81559
    taints: ["nvidia.com/gpu=present:NoSchedule"]
    topology: { zones: [za, zb], nodesPerRack: 2, nodesPerNVSwitchDomain: 4 }
  - name: cpu
    count: 2
    cpu: 500m
    memory: 4Gi
`,
    );
    const nodes = expandNodes(file);
    expect(nodes.map((n) => n.name)).toEqual([
      "h100-0",
      "h100-1",
      "h100-2",
      "h100-3",
      "h100-4",
      "h100-5",
      "h100-6",
      "h100-7",
      "cpu-0",
      "cpu-1",
    ]);
    const first = nodes[0]!;
    expect(first.capacity).toEqual({ cpuMillis: 96_000, memory: 2 ** 40, gpus: 8, gpuMemory: 81559 });
    expect(first.gpuModel).toBe("NVIDIA-H100");
    expect(first.taints).toEqual(["nvidia.com/gpu=present:NoSchedule"]);
    expect(first.labels).toMatchObject({
      "nvidia.com/gpu.product": "NVIDIA-H100",
      "nvidia.com/gpu.memory": "81559",
      "topology.kubernetes.io/zone": "za",
      "topology.fleetq.io/rack": "h100-za-rack0",
      "topology.fleetq.io/nvswitch-domain": "h100-za-nvs0",
    });
    const zones = nodes.slice(0, 8).map((n) => n.labels["topology.kubernetes.io/zone"]);
    expect(zones).toEqual(["za", "za", "za", "za", "zb", "zb", "zb", "zb"]);
    const racks = nodes.slice(0, 8).map((n) => n.labels["topology.fleetq.io/rack"]);
    expect(new Set(racks).size).toBe(4);
    // Racks never cross a zone: node 4 starts zone zb's first rack.
    expect(nodes[4]!.labels["topology.fleetq.io/rack"]).toBe("h100-zb-rack0");
    const cpu = nodes[8]!;
    expect(cpu.capacity).toEqual({ cpuMillis: 500, memory: 4 * 2 ** 30, gpus: 0, gpuMemory: 0 });
    expect(cpu.gpuModel).toBeNull();
    expect(file.defaultPodDurationSeconds).toBe(60);
  });

  it("gives GPU nodes their devices: per NVLink domain and NUMA node, or the node's NVSwitch domain", () => {
    const file = parseClusterFile(
      "devices.yaml",
      `
nodeGroups:
  - { name: dgx, count: 1, cpu: 96, memory: 1Ti, gpus: 8, gpuModel: H100,
      gpuTopology: { devicesPerNVLinkDomain: 4, devicesPerNumaNode: 2 } }
  - { name: nvl, count: 2, cpu: 96, memory: 1Ti, gpus: 4, gpuModel: GB200,
      topology: { nodesPerNVSwitchDomain: 2 } }
  - { name: plain, count: 1, cpu: 8, memory: 64Gi, gpus: 2, gpuModel: L4 }
`,
    );
    const [dgx, nvl0, nvl1, plain] = expandNodes(file);
    expect(dgx!.gpuDevices).toEqual(
      [0, 1, 2, 3, 4, 5, 6, 7].map((index) => ({
        index,
        nvlinkDomain: `nvlink${Math.floor(index / 4)}`,
        numaNode: Math.floor(index / 2),
      })),
    );
    expect(nvl0!.gpuDevices).toEqual([0, 1, 2, 3].map((index) => ({ index, nvlinkDomain: "nvl-nvs0" })));
    expect(nvl1!.gpuDevices?.map((d) => d.nvlinkDomain)).toEqual(Array(4).fill("nvl-nvs0"));
    expect(plain!.gpuDevices).toBeUndefined();
  });

  it.each([
    [
      "nodeGroups:\n  - { name: g, count: 1, cpu: 1, memory: 1Gi, gpuTopology: { devicesPerNumaNode: 2 } }",
      "field nodeGroups.0.gpuTopology: gpuTopology describes GPUs: the group has none",
    ],
    ["nodeGroups: []", "field nodeGroups:"],
    ["nodeGroups:\n  - { name: g, count: 0, cpu: 1, memory: 1Gi }", "field nodeGroups.0.count:"],
    [
      "nodeGroups:\n  - { name: g, count: 1, cpu: lots, memory: 1Gi }",
      "field nodeGroups.0.cpu: expected a Kubernetes quantity",
    ],
    [
      "nodeGroups:\n  - { name: g, count: 1, cpu: 1, memory: 1Gi, gpus: 2 }",
      "field nodeGroups.0.gpuModel: a group with GPUs needs gpuModel",
    ],
    [
      "nodeGroups:\n  - { name: g, count: 1, cpu: 1, memory: 1Gi, taints: [bad] }",
      "field nodeGroups.0.taints.0:",
    ],
    ["nodeGroups:\n  - { name: g, count: 1, cpu: 1, memory: 1Gi, colour: red }", "field nodeGroups.0:"],
    [
      "nodeGroups:\n  - { name: g, count: 1, cpu: 1, memory: 1Gi }\n  - { name: g, count: 1, cpu: 1, memory: 1Gi }",
      'field nodeGroups.1.name: duplicate node group "g"',
    ],
    ["nodeGroups: [", "bad.yaml: not valid YAML"],
  ])("rejects %j naming the file and the field", (text, expected) => {
    let error: unknown;
    try {
      parseClusterFile("bad.yaml", text);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigFileError);
    expect((error as Error).message).toContain("bad.yaml");
    expect((error as Error).message).toContain(expected);
  });

  it("names a missing file", async () => {
    await expect(loadClusterFile("/nonexistent/cluster.yaml")).rejects.toThrow(
      "/nonexistent/cluster.yaml: cannot read",
    );
  });

  it("loads every example cluster", async () => {
    const files = readdirSync(EXAMPLES).filter((f) => f.endsWith(".yaml"));
    expect(files.length).toBeGreaterThanOrEqual(3);
    for (const name of files) {
      const file = await loadClusterFile(join(EXAMPLES, name));
      const nodes = expandNodes(file);
      expect(nodes.length, name).toBeGreaterThan(0);
      expect(new Set(nodes.map((n) => n.name)).size, name).toBe(nodes.length);
    }
  });
});
