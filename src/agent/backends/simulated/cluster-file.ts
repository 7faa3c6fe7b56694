// The simulated cluster file: node groups (count, cpu/memory/GPUs, GPU model and memory,
// labels, taints, topology) expanded into virtual nodes with the labels a real GPU
// cluster would carry (GPU feature discovery, zone, rack, NVSwitch domain), and the device
// topology of their GPUs (NVLink domain, NUMA node) when the file says it.
import { z } from "zod";
import type { GpuDevice, NodeInventory } from "../types.js";
import { bytes, cpuMillis, parseQuantity } from "../../quantity.js";
import {
  GPU_COUNT_LABEL,
  GPU_MEMORY_LABEL,
  GPU_PRODUCT_LABEL,
  HOSTNAME_LABEL,
  NODE_GROUP_LABEL,
  NVSWITCH_DOMAIN_LABEL,
  RACK_LABEL,
  ZONE_LABEL,
} from "../../../protocol/labels.js";
import { parseYaml, readYamlFile } from "../../yaml-file.js";

const quantity = z.union([z.number().nonnegative(), z.string()]).refine(
  (value) => {
    try {
      return parseQuantity(value) >= 0;
    } catch {
      return false;
    }
  },
  { message: 'expected a Kubernetes quantity such as 64, "500m" or "512Gi"' },
);

const taint = z.string().regex(/^[^=:\s]+(=[^:\s]*)?:(NoSchedule|PreferNoSchedule|NoExecute)$/, {
  message: 'expected "key=value:Effect" or "key:Effect" (NoSchedule, PreferNoSchedule, NoExecute)',
});

const nodeGroupSchema = z
  .object({
    name: z
      .string()
      .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, { message: "expected a DNS label (a-z, 0-9, -)" }),
    count: z.number().int().positive().max(100_000),
    cpu: quantity,
    memory: quantity,
    gpus: z.number().int().nonnegative().default(0),
    gpuModel: z.string().min(1).optional(),
    /** MiB of one GPU device. */
    gpuMemoryMiB: z.number().int().positive().optional(),
    labels: z.record(z.string(), z.string()).default({}),
    taints: z.array(taint).default([]),
    unschedulable: z.boolean().default(false),
    maxPods: z.number().int().positive().default(110),
    topology: z
      .object({
        /** Nodes are split into contiguous, even blocks, one per zone. */
        zones: z.array(z.string().min(1)).min(1).optional(),
        nodesPerRack: z.number().int().positive().optional(),
        nodesPerNVSwitchDomain: z.number().int().positive().optional(),
      })
      .strict()
      .default({}),
    /** The GPUs inside each node: devices 0..n-1 in blocks per NVLink domain and per NUMA node. */
    gpuTopology: z
      .object({
        devicesPerNVLinkDomain: z.number().int().positive().optional(),
        devicesPerNumaNode: z.number().int().positive().optional(),
      })
      .strict()
      .optional(),
  })
  .strict()
  .refine((group) => group.gpus === 0 || group.gpuModel !== undefined, {
    message: "a group with GPUs needs gpuModel",
    path: ["gpuModel"],
  })
  .refine((group) => group.gpus > 0 || group.gpuTopology === undefined, {
    message: "gpuTopology describes GPUs: the group has none",
    path: ["gpuTopology"],
  });

export const clusterFileSchema = z
  .object({
    name: z.string().optional(),
    /** Labels of the cluster itself (sent with registerCluster). */
    labels: z.record(z.string(), z.string()).default({}),
    /** How long a pod runs when its job does not say. */
    defaultPodDurationSeconds: z.number().positive().default(60),
    /** A running pod writes a log line this often (its logs: fleetq logs). */
    logIntervalSeconds: z.number().positive().default(60),
    nodeGroups: z.array(nodeGroupSchema).min(1),
  })
  .strict()
  .superRefine((file, ctx) => {
    const seen = new Set<string>();
    file.nodeGroups.forEach((group, i) => {
      if (seen.has(group.name)) {
        ctx.addIssue({
          code: "custom",
          message: `duplicate node group "${group.name}"`,
          path: ["nodeGroups", i, "name"],
        });
      }
      seen.add(group.name);
    });
  });

export type ClusterFile = z.output<typeof clusterFileSchema>;
type NodeGroup = ClusterFile["nodeGroups"][number];

export function loadClusterFile(file: string): Promise<ClusterFile> {
  return readYamlFile(file, clusterFileSchema);
}

export function parseClusterFile(file: string, text: string): ClusterFile {
  return parseYaml(file, text, clusterFileSchema);
}

/** Every virtual node of the cluster, in file order. */
export function expandNodes(cluster: ClusterFile): NodeInventory[] {
  return cluster.nodeGroups.flatMap(expandGroup);
}

function expandGroup(group: NodeGroup): NodeInventory[] {
  const width = String(group.count - 1).length;
  const zones = group.topology.zones ?? [];
  const nodes: NodeInventory[] = [];
  for (let i = 0; i < group.count; i++) {
    const name = `${group.name}-${String(i).padStart(width, "0")}`;
    const labels: Record<string, string> = { [HOSTNAME_LABEL]: name, [NODE_GROUP_LABEL]: group.name };
    // Contiguous blocks per zone; racks and NVSwitch domains never cross a zone.
    const zoneIndex = Math.floor((i * Math.max(zones.length, 1)) / group.count);
    const zoneStart = Math.ceil((zoneIndex * group.count) / Math.max(zones.length, 1));
    const inZone = i - zoneStart;
    const zone = zones[zoneIndex];
    if (zone) labels[ZONE_LABEL] = zone;
    const scope = zone ? `${group.name}-${zone}` : group.name;
    if (group.topology.nodesPerRack) {
      labels[RACK_LABEL] = `${scope}-rack${Math.floor(inZone / group.topology.nodesPerRack)}`;
    }
    if (group.topology.nodesPerNVSwitchDomain) {
      labels[NVSWITCH_DOMAIN_LABEL] =
        `${scope}-nvs${Math.floor(inZone / group.topology.nodesPerNVSwitchDomain)}`;
    }
    if (group.gpus > 0 && group.gpuModel) {
      labels[GPU_PRODUCT_LABEL] = group.gpuModel;
      labels[GPU_COUNT_LABEL] = String(group.gpus);
      if (group.gpuMemoryMiB) labels[GPU_MEMORY_LABEL] = String(group.gpuMemoryMiB);
    }
    Object.assign(labels, group.labels);
    nodes.push({
      name,
      capacity: {
        cpuMillis: cpuMillis(group.cpu),
        memory: bytes(group.memory),
        gpus: group.gpus,
        gpuMemory: group.gpus > 0 ? (group.gpuMemoryMiB ?? 0) : 0,
      },
      labels,
      gpuModel: group.gpus > 0 ? (group.gpuModel ?? null) : null,
      unschedulable: group.unschedulable,
      ready: true,
      maxPods: group.maxPods,
      taints: group.taints,
      ...gpuDevicesOf(group, labels[NVSWITCH_DOMAIN_LABEL]),
    });
  }
  return nodes;
}

/**
 * The node's devices, when the file gives their topology: `gpuTopology` blocks (devices of one
 * NVLink domain, of one NUMA node), else the node's NVSwitch domain for all of them (every GPU
 * of the node on one switch fabric). Neither: no device list (the core picks no devices).
 */
function gpuDevicesOf(group: NodeGroup, nvswitchDomain: string | undefined): { gpuDevices?: GpuDevice[] } {
  const t = group.gpuTopology;
  if (group.gpus === 0 || (!t && !nvswitchDomain)) return {};
  const perDomain = t?.devicesPerNVLinkDomain;
  const perNuma = t?.devicesPerNumaNode;
  const gpuDevices = Array.from({ length: group.gpus }, (_, index): GpuDevice => {
    const domain = perDomain ? `nvlink${Math.floor(index / perDomain)}` : nvswitchDomain;
    return {
      index,
      ...(domain ? { nvlinkDomain: domain } : {}),
      ...(perNuma ? { numaNode: Math.floor(index / perNuma) } : {}),
    };
  });
  return { gpuDevices };
}
