// `get cluster NAME`: a cluster's state and capacity, then its nodes.
import type { ClusterDetail } from "../client/types.js";
import { formatAge, formatResource, type ResourceKey } from "./format.js";
import { renderTable } from "./table.js";

const used = (
  r: { allocated: ClusterDetail["allocated"]; capacity: ClusterDetail["capacity"] },
  key: ResourceKey,
) => `${formatResource(r.allocated, key)}/${formatResource(r.capacity, key)}`;

export function clusterDetailView(c: ClusterDetail): string {
  return [
    `Cluster:    ${c.name}`,
    `State:      ${c.state}${c.cordoned ? " (cordoned: takes no new pods)" : ""}`,
    `Heartbeat:  ${c.heartbeatAt ? `${formatAge(c.heartbeatAt)} ago` : "never"}`,
    `Owner:      ${c.owner ? `${c.owner.worker} (since ${formatAge(c.owner.since)} ago)` : "none (no worker holds its lease)"}`,
    `Labels:     ${c.labels.map((l) => `${l.key}=${l.value}`).join(", ") || "-"}`,
    `Allocated:  GPU ${used(c, "gpu")}, CPU ${used(c, "cpu")}, memory ${used(c, "memory")}`,
    "",
    renderTable(
      [
        { header: "NODE", value: (n: ClusterDetail["nodes"][number]) => n.name },
        {
          header: "READY",
          value: (n) => (n.ready && !n.unschedulable ? "yes" : n.unschedulable ? "cordoned" : "no"),
        },
        { header: "GPU MODEL", value: (n) => n.gpuModel ?? "-" },
        { header: "GPU", value: (n) => used(n, "gpu"), align: "right" },
        { header: "CPU", value: (n) => used(n, "cpu"), align: "right" },
        { header: "MEMORY", value: (n) => used(n, "memory"), align: "right" },
      ],
      c.nodes,
    ),
  ].join("\n");
}
