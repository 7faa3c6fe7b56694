// The queue tree (`get queues`) and fair-share rows (`fairshare`), indented by depth.
import type { QueueShare, QueueView, ResourceName } from "../client/types.js";
import { formatBytes, formatCpu, formatGpu, formatResource, type ResourceKey } from "./format.js";
import { renderTable } from "./table.js";

/** Queue names in tree order (parents before children, siblings by name) with their depth. */
export function treeOrder(
  queues: readonly { name: string; parent: string | null }[],
): { name: string; depth: number }[] {
  const children = new Map<string | null, string[]>();
  const names = new Set(queues.map((q) => q.name));
  for (const q of queues) {
    const parent = q.parent && names.has(q.parent) ? q.parent : null;
    children.set(parent, [...(children.get(parent) ?? []), q.name]);
  }
  const out: { name: string; depth: number }[] = [];
  const visit = (parent: string | null, depth: number) => {
    for (const name of (children.get(parent) ?? []).sort()) {
      out.push({ name, depth });
      visit(name, depth + 1);
    }
  };
  visit(null, 0);
  return out;
}

const indent = (name: string, depth: number) => `${"  ".repeat(depth)}${name}`;

function quotaValue(resource: ResourceName, v: number | null): string {
  if (v === null) return "-";
  if (resource === "GPU") return formatGpu(v);
  if (resource === "CPU") return formatCpu(v);
  return formatBytes(v);
}

/** "gpu 8/16 w2" per resource of a scope: deserved/limit and the over-quota weight. */
function quotaText(q: QueueView, scope: string | null): string {
  const rows = q.quotas.filter((r) => r.cluster === scope);
  return rows
    .sort((a, b) => a.resource.localeCompare(b.resource))
    .map((r) => {
      const weight = r.overQuotaWeight === null ? "" : ` w${r.overQuotaWeight}`;
      return `${r.resource.toLowerCase()} ${quotaValue(r.resource, r.deserved)}/${quotaValue(r.resource, r.limit)}${weight}`;
    })
    .join(", ");
}

export function queuesTable(queues: readonly QueueView[]): string {
  const byName = new Map(queues.map((q) => [q.name, q]));
  const order = treeOrder(queues.map((q) => ({ name: q.name, parent: q.parent?.name ?? null })));
  return renderTable(
    [
      { header: "QUEUE", value: (r) => indent(r.name, r.depth) },
      { header: "PRIORITY", value: (r) => String(byName.get(r.name)!.priority), align: "right" },
      { header: "QUOTA (DESERVED/LIMIT)", value: (r) => quotaText(byName.get(r.name)!, null) || "-" },
      {
        header: "CLUSTER OVERRIDES",
        value: (r) => {
          const q = byName.get(r.name)!;
          const scopes = [
            ...new Set(q.quotas.map((x) => x.cluster).filter((c): c is string => c !== null)),
          ].sort();
          return scopes.map((s) => `${s}: ${quotaText(q, s)}`).join("; ");
        },
      },
    ],
    order,
  );
}

export function fairShareTable(
  rows: readonly QueueShare[],
  queues: readonly { name: string; parent: string | null }[],
  resource: ResourceKey,
): string {
  const order = treeOrder(queues);
  const rank = new Map(order.map((o, i) => [o.name, i]));
  const depth = new Map(order.map((o) => [o.name, o.depth]));
  const sorted = [...rows].sort(
    (a, b) =>
      (a.cluster ?? "\uffff").localeCompare(b.cluster ?? "\uffff") ||
      (rank.get(a.queue) ?? 1e9) - (rank.get(b.queue) ?? 1e9),
  );
  const v = (r: QueueShare, key: "deserved" | "fairShare" | "allocated" | "requested" | "limit") =>
    formatResource(r[key], resource);
  const unit = resource === "gpu" ? "GPU" : resource === "cpu" ? "CPU (cores)" : "MEMORY";
  return `${unit}\n${renderTable(
    [
      { header: "CLUSTER", value: (r: QueueShare) => r.cluster ?? "(total)" },
      { header: "QUEUE", value: (r) => indent(r.queue, depth.get(r.queue) ?? 0) },
      { header: "DESERVED", value: (r) => v(r, "deserved"), align: "right" },
      { header: "FAIR SHARE", value: (r) => v(r, "fairShare"), align: "right" },
      { header: "ALLOCATED", value: (r) => v(r, "allocated"), align: "right" },
      { header: "REQUESTED", value: (r) => v(r, "requested"), align: "right" },
      { header: "LIMIT", value: (r) => v(r, "limit"), align: "right" },
      { header: "RECENT USAGE", value: (r) => formatResource(r.usage, resource), align: "right" },
    ],
    sorted,
  )}`;
}
