// The dashboard's sections, drawn from the API's answers.
import { h, replace } from "./dom.js";
import { age, amount, show, shortText, startsText } from "./format.js";

/** Queues in tree order with their depth. */
function treeOrder(queues) {
  const children = new Map();
  const names = new Set(queues.map((q) => q.name));
  for (const q of queues) {
    const parent = q.parent && names.has(q.parent.name) ? q.parent.name : null;
    if (!children.has(parent)) children.set(parent, []);
    children.get(parent).push(q.name);
  }
  const out = [];
  const visit = (parent, depth) => {
    for (const name of (children.get(parent) ?? []).sort()) {
      out.push({ name, depth });
      visit(name, depth + 1);
    }
  };
  visit(null, 0);
  return out;
}

/** Table headers; a trailing ">" right-aligns the column (numbers). */
export const headerRow = (titles) =>
  h(
    "tr",
    {},
    titles.map((t) => (t.endsWith(">") ? h("th", { class: "num" }, t.slice(0, -1)) : h("th", {}, t))),
  );

/** A job's pods in these states (all of them without states), from its podStates counts. */
const podCount = (job, ...states) =>
  job.podStates.filter((p) => !states.length || states.includes(p.state)).reduce((n, p) => n + p.count, 0);

const pct = (v, max) => `${max > 0 && v > 0 ? Math.min(100, (v / max) * 100) : 0}%`;

/** deserved (outline), fair share (light), allocated (solid; orange above fair share), usage (line). */
function shareBar(row, resource, max) {
  if (!row) return h("div", { class: "empty" }, "-");
  const deserved = amount(row.deserved, resource);
  const fair = amount(row.fairShare, resource);
  const alloc = amount(row.allocated, resource);
  const usage = amount(row.usage, resource);
  const title = [
    `deserved ${show(deserved, resource)}`,
    `fair share ${show(fair, resource)}`,
    `allocated ${show(alloc, resource)}`,
    `requested ${show(amount(row.requested, resource), resource)}`,
    `limit ${show(amount(row.limit, resource), resource)}`,
    `recent usage ${show(usage, resource)}`,
  ].join(", ");
  return h(
    "div",
    { title },
    h(
      "div",
      { class: "bar" },
      h("span", { class: "fair", style: { width: pct(fair, max) } }),
      h("span", {
        class: `alloc${fair >= 0 && alloc > fair + 1e-9 ? " over" : ""}`,
        style: { width: pct(alloc, max) },
      }),
      deserved > 0 ? h("span", { class: "deserved", style: { width: pct(deserved, max) } }) : null,
      usage > 0 ? h("span", { class: "usage", style: { width: pct(usage, max) } }) : null,
    ),
    h(
      "div",
      { class: "caption" },
      `${show(alloc, resource)} / ${show(fair, resource)} / ${show(deserved, resource)}`,
    ),
  );
}

export function renderQueues(el, data, resource) {
  const { queues, fairShare, clusters } = data;
  if (!queues.length) return replace(el, h("p", { class: "empty" }, "No queues yet."));
  const columns = [null, ...clusters.map((c) => c.name)];
  const rowOf = new Map(fairShare.map((r) => [`${r.queue}\u0000${r.cluster ?? ""}`, r]));
  const order = treeOrder(queues);
  // One scale per column: the largest finite value shown in it.
  const maxOf = (cluster) =>
    Math.max(
      0,
      ...fairShare
        .filter((r) => (r.cluster ?? null) === cluster)
        .flatMap((r) =>
          ["deserved", "fairShare", "allocated", "usage"].map((k) => amount(r[k], resource) ?? 0),
        ),
    );
  const max = new Map(columns.map((c) => [c, maxOf(c)]));
  const pendingPods = new Map();
  for (const j of data.pending) {
    const n = podCount(j, "PENDING", "PIPELINED");
    pendingPods.set(j.queue.name, (pendingPods.get(j.queue.name) ?? 0) + n);
  }
  replace(
    el,
    h(
      "table",
      { class: "queues" },
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          h("th", {}, "Queue"),
          h("th", { class: "num" }, "Pending pods"),
          columns.map((c) => h("th", {}, c === null ? "Total (alloc / fair / deserved)" : c)),
        ),
      ),
      h(
        "tbody",
        {},
        order.map(({ name, depth }) =>
          h(
            "tr",
            { "data-queue": name },
            h("td", { class: "queue-name", style: { paddingLeft: `${8 + depth * 18}px` } }, name),
            h("td", { class: "num" }, String(pendingPods.get(name) ?? 0)),
            columns.map((c) =>
              h("td", {}, shareBar(rowOf.get(`${name}\u0000${c ?? ""}`), resource, max.get(c))),
            ),
          ),
        ),
      ),
    ),
  );
}

function capacityRow(label, cluster, resource) {
  const cap = amount(cluster.capacity, resource) ?? 0;
  const used = amount(cluster.allocated, resource) ?? 0;
  return h(
    "div",
    { class: "row" },
    h("span", {}, label),
    h("div", { class: "bar" }, h("span", { class: "alloc", style: { width: pct(used, cap) } })),
    h("span", { class: "caption" }, `${show(used, resource)} / ${show(cap, resource)}`),
  );
}

export function renderClusters(el, clusters) {
  if (!clusters.length) return replace(el, h("p", { class: "empty" }, "No clusters registered yet."));
  replace(
    el,
    clusters.map((c) =>
      h(
        "div",
        { class: "card", "data-cluster": c.name },
        h("h3", {}, c.name),
        h("div", { class: "meta" }, `${c.state}${c.cordoned ? " · cordoned" : ""} · ${c.nodeCount} nodes`),
        capacityRow("GPU", c, "gpu"),
        capacityRow("CPU", c, "cpu"),
        capacityRow("Memory", c, "memory"),
      ),
    ),
  );
}

/** A link to the job's page. */
const jobLink = (job) => h("a", { href: `#job=${encodeURIComponent(job.id)}`, class: "job-link" }, job.name);

/** A job's labels (key=value), under its name. */
function jobLabels(labels) {
  if (!labels?.length) return [];
  return h(
    "div",
    { class: "labels" },
    labels.map((l) => h("span", { class: "label", "data-label": l.key }, `${l.key}=${l.value}`)),
  );
}

export function renderPending(el, jobs) {
  if (!jobs.length) return replace(el, h("p", { class: "empty" }, "No pending jobs."));
  replace(
    el,
    h(
      "table",
      {},
      h("thead", {}, headerRow(["Job", "Queue", "Cluster", "Pods>", "Age>", "Expected start", "Why"])),
      h(
        "tbody",
        {},
        jobs.map((j) =>
          h(
            "tr",
            { "data-job-id": j.id },
            h("td", {}, jobLink(j), jobLabels(j.labels)),
            h("td", {}, j.queue.name),
            h("td", {}, j.requestedCluster ?? "any"),
            h("td", { class: "num" }, String(podCount(j))),
            h("td", { class: "num" }, age(j.createdAt)),
            h("td", { class: "starts" }, startsText(j)),
            h(
              "td",
              {},
              h("div", { class: "reason" }, j.pendingReason?.message ?? "waiting for the scheduler"),
              (j.pendingReason?.clusters ?? []).map((c) =>
                h(
                  "div",
                  { class: "short" },
                  `${c.cluster}: ${c.message}${c.short.length ? ` — short of ${c.short.map(shortText).join(", ")}` : ""}`,
                ),
              ),
            ),
          ),
        ),
      ),
    ),
  );
}

export function renderRunning(el, jobs) {
  if (!jobs.length) return replace(el, h("p", { class: "empty" }, "No running jobs."));
  replace(
    el,
    h(
      "table",
      {},
      h("thead", {}, headerRow(["Job", "Queue", "Cluster", "Pods running>", "Running for>"])),
      h(
        "tbody",
        {},
        jobs.map((j) =>
          h(
            "tr",
            { "data-job-id": j.id },
            h("td", {}, jobLink(j), jobLabels(j.labels)),
            h("td", {}, j.queue.name),
            h("td", {}, j.cluster?.name ?? "-"),
            h("td", { class: "num" }, `${podCount(j, "RUNNING")}/${podCount(j)}`),
            h("td", { class: "num" }, age(j.startedAt)),
          ),
        ),
      ),
    ),
  );
}

export function renderEvents(el, events) {
  if (!events.length) return replace(el, h("li", { class: "empty" }, "Waiting for events…"));
  replace(
    el,
    events.map((e) =>
      h(
        "li",
        {},
        h("time", {}, new Date(e.at).toLocaleTimeString()),
        `${e.kind}: ${e.message}`,
        e.job ? [" ", jobLink({ id: e.job, name: "job" })] : null,
      ),
    ),
  );
}
