// Agent: the node inventory of its cluster. Upserts the reported nodes; with `complete`, nodes
// not in the report are removed (and a LOST cluster is READY again). The generation moves only when something really changed, so a
// periodic unchanged report never disturbs a scheduling cycle.
import { isDeepStrictEqual } from "node:util";
import { z } from "zod";
import type { GpuDeviceSpec, Taint } from "../../core/index.js";
import { ConflictError, NotFoundError } from "../errors.js";
import { toJson } from "../json.js";
import { type Actor, type Store, transact } from "../store.js";
import { clusterName, labelInputs, labelsToRecord } from "../validation/names.js";
import { parseInput } from "../validation/parse.js";
import { bytes, cpuMillis, gpuMemoryMiB } from "../validation/quantities.js";
import { bumpGeneration, lockCluster } from "./cluster-fence.js";

const TAINT = /^([^=:\s]+)(?:=([^:\s]*))?:(NoSchedule|PreferNoSchedule|NoExecute)$/;

export function parseTaint(s: string): Taint | null {
  const m = TAINT.exec(s);
  if (!m) return null;
  return { key: m[1]!, ...(m[2] !== undefined ? { value: m[2] } : {}), effect: m[3] as Taint["effect"] };
}

/** One GPU device of a node: its index and where it sits (NVLink/NVSwitch domain, NUMA node). */
const gpuDevice = z
  .object({
    index: z.int("index must be a whole number").min(0, "index must not be negative"),
    nvlinkDomain: z.string().min(1, "nvlinkDomain must not be empty").max(253).nullish(),
    numaNode: z.int("numaNode must be a whole number").min(0, "numaNode must not be negative").nullish(),
  })
  .strict();

/** Stored without absent keys, so an unchanged report compares equal to the stored row. */
const gpuDeviceRow = (d: z.output<typeof gpuDevice>): GpuDeviceSpec => ({
  index: d.index,
  ...(d.nvlinkDomain != null ? { nvlinkDomain: d.nvlinkDomain } : {}),
  ...(d.numaNode != null ? { numaNode: d.numaNode } : {}),
});

const nodeReport = z
  .object({
    name: z
      .string()
      .min(1, "node name must not be empty")
      .max(253, "node name is too long")
      .regex(
        /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/,
        "node name must be a DNS subdomain (lowercase letters, digits, '-', '.')",
      ),
    capacity: z
      .object({
        cpu: cpuMillis.nullish(),
        memory: bytes.nullish(),
        gpu: z
          .int("a node's gpu capacity is a whole number of devices")
          .min(0, "gpu must not be negative")
          .nullish(),
        gpuMemory: gpuMemoryMiB.nullish(),
      })
      .strict()
      .refine((c) => !(c.gpuMemory && !c.gpu), {
        message: "gpuMemory needs GPUs (it is the total memory of the node's GPUs)",
        path: ["gpuMemory"],
      }),
    labels: labelInputs.nullish(),
    gpuModel: z.string().min(1).nullish(),
    unschedulable: z.boolean().nullish(),
    ready: z.boolean().nullish(),
    maxPods: z.int().min(0, "maxPods must not be negative").nullish(),
    taints: z
      .array(
        z
          .string()
          .refine(
            (t) => parseTaint(t) !== null,
            'taint must look like "key=value:NoSchedule" or "key:NoExecute"',
          ),
      )
      .nullish(),
    /** Device topology; absent or empty = not reported (no device choice on this node). */
    gpuDevices: z.array(gpuDevice).max(1024).nullish(),
  })
  .strict()
  .superRefine((n, ctx) => {
    const devices = n.gpuDevices ?? [];
    if (!devices.length) return;
    const gpus = n.capacity.gpu ?? 0;
    if (devices.length !== gpus)
      ctx.addIssue({
        code: "custom",
        path: ["gpuDevices"],
        message: `gpuDevices lists ${devices.length} device(s), the node has ${gpus} GPU(s): one entry per device`,
      });
    const seen = new Set<number>();
    devices.forEach((d, j) => {
      if (seen.has(d.index))
        ctx.addIssue({
          code: "custom",
          path: ["gpuDevices", j, "index"],
          message: `device index ${d.index} is listed twice`,
        });
      seen.add(d.index);
    });
  });

const reportNodesInput = z
  .object({ cluster: clusterName, nodes: z.array(nodeReport).max(20_000), complete: z.boolean() })
  .strict()
  .superRefine((r, ctx) => {
    const seen = new Set<string>();
    r.nodes.forEach((n, i) => {
      if (seen.has(n.name))
        ctx.addIssue({
          code: "custom",
          path: ["nodes", i, "name"],
          message: `node "${n.name}" is reported twice`,
        });
      seen.add(n.name);
    });
  });
export type ReportNodesInput = z.input<typeof reportNodesInput>;

/** Returns how many nodes were created, changed or removed. */
export async function reportNodes(store: Store, actor: Actor, input: ReportNodesInput): Promise<number> {
  const r = parseInput(reportNodesInput, input);
  const now = new Date();
  const rows = r.nodes.map((n) => {
    const gpus = n.capacity.gpu ?? 0;
    return {
      clusterName: r.cluster,
      name: n.name,
      labels: labelsToRecord(n.labels ?? []),
      taints: (n.taints ?? []).map((t) => parseTaint(t)!),
      unschedulable: n.unschedulable ?? false,
      ready: n.ready ?? true,
      cpuMillis: n.capacity.cpu ?? 0,
      memory: n.capacity.memory ?? 0n,
      gpus,
      gpuMemory: gpus ? Math.floor((n.capacity.gpuMemory ?? 0) / gpus) : 0,
      maxPods: n.maxPods ?? 110,
      gpuModel: n.gpuModel ?? null,
      gpuDevices: (n.gpuDevices ?? []).map(gpuDeviceRow).sort((a, b) => a.index - b.index),
    };
  });
  return transact(store, actor, async (tx, record) => {
    if (!(await lockCluster(tx, r.cluster))) throw new NotFoundError("cluster", r.cluster, "cluster");
    const { state } = await tx.cluster.findUniqueOrThrow({
      where: { name: r.cluster },
      select: { state: true },
    });
    // A LOST cluster is READY again only once a complete report says what it has. An agent whose
    // reports kept arriving, only too slowly, has no failed round that would make it send one:
    // its partial reports (heartbeats included) are refused until it does.
    if (!r.complete && state === "LOST")
      throw new ConflictError(
        `cluster ${r.cluster} is LOST: only a complete node report brings it back`,
        "complete",
      );
    const existing = new Map(
      (await tx.node.findMany({ where: { clusterName: r.cluster } })).map((n) => [n.name, n]),
    );
    const created = rows.filter((n) => !existing.has(n.name));
    const changed = rows.filter((n) => {
      const old = existing.get(n.name);
      if (!old) return false;
      const { updatedAt: _u, ...oldFields } = old;
      return !isDeepStrictEqual(oldFields, n);
    });
    const reported = new Set(rows.map((n) => n.name));
    const removed = r.complete ? [...existing.keys()].filter((name) => !reported.has(name)) : [];

    if (created.length) {
      await tx.node.createMany({
        data: created.map((n) => ({
          ...n,
          labels: toJson(n.labels),
          taints: toJson(n.taints),
          gpuDevices: toJson(n.gpuDevices),
        })),
      });
    }
    for (const n of changed) {
      await tx.node.update({
        where: { clusterName_name: { clusterName: r.cluster, name: n.name } },
        data: { ...n, labels: toJson(n.labels), taints: toJson(n.taints), gpuDevices: toJson(n.gpuDevices) },
      });
    }
    if (removed.length)
      await tx.node.deleteMany({ where: { clusterName: r.cluster, name: { in: removed } } });
    const changes = created.length + changed.length + removed.length;
    if (changes) {
      await bumpGeneration(tx, r.cluster);
      record({
        kind: "nodes.reported",
        cluster: r.cluster,
        message: `cluster ${r.cluster}: ${created.length} node(s) added, ${changed.length} changed, ${removed.length} removed`,
      });
    }
    const back = state === "LOST" && r.complete;
    await tx.cluster.update({
      where: { name: r.cluster },
      data: { heartbeatAt: now, ...(state !== "LOST" || back ? { state: "READY" } : {}) },
    });
    if (back) {
      if (!changes) await bumpGeneration(tx, r.cluster);
      record({
        kind: "cluster.ready",
        cluster: r.cluster,
        message: `cluster ${r.cluster} READY again: its agent reports`,
      });
    }
    return changes;
  });
}
